"""Who said a user turn, in the form each API family understands (pure).

In a shared channel several people talk to the model; without their names every user
turn looks like one person. The OpenAI chat format has a `name` field on a message but
allows only `^[a-zA-Z0-9_-]{1,64}$`; the other families have no such field, so the name
becomes a short "Name: " prefix on the turn's text. A name the field cannot carry
(non-Latin letters, punctuation) is also sent as a prefix, so it is never mangled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from providers.types import ContentPart, TextPart

NAME_FIELD = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MAX_PREFIX_NAME = 64  # a display name is at most 32 characters; this only bounds odd input


def name_field(name: str | None) -> str | None:
    """The name as the OpenAI `name` field (spaces as "_"), or None when it does not fit."""
    if not name:
        return None
    candidate = re.sub(r"\s+", "_", name.strip())
    return candidate if NAME_FIELD.fullmatch(candidate) else None


def with_speaker(content: str | Sequence[ContentPart], name: str | None) -> str | Sequence[ContentPart]:
    """`content` with "Name: " in front of its text (the first text part when it has parts)."""
    if not name:
        return content
    prefix = f"{name.strip()[:MAX_PREFIX_NAME]}: "
    if isinstance(content, str):
        return prefix + content
    parts = list(content)
    for i, part in enumerate(parts):
        if isinstance(part, TextPart):
            parts[i] = TextPart(prefix + part.text)
            return parts
    return [TextPart(prefix.rstrip()), *parts]
