"""The one definition of a think tag.

Backends that leak reasoning into visible content wrap it in `<think>` tags, sometimes
with a vendor namespace (`<mm:think>`). Every consumer (the content stripper, the Discord
buffer, the final clean-up sweep) builds on the pieces here, so the shape is decided in
one place. Any single namespace segment is accepted, so a new vendor prefix needs no code
change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# Pattern pieces, exported for consumers that compose their own expressions.
TAG_WORD = "think"
NAMESPACE_PATTERN = r"[A-Za-z][A-Za-z0-9_.\-]*:"
OPEN_TAG_PATTERN = rf"<(?:{NAMESPACE_PATTERN})?{TAG_WORD}>"
CLOSE_TAG_PATTERN = rf"</(?:{NAMESPACE_PATTERN})?{TAG_WORD}>"
ANY_TAG_PATTERN = rf"</?(?:{NAMESPACE_PATTERN})?{TAG_WORD}>"
# ASCII: case-insensitive matching must not fold the Kelvin sign into `k`.
TAG_FLAGS = re.IGNORECASE | re.ASCII

THINK_TAG_RE = re.compile(ANY_TAG_PATTERN, TAG_FLAGS)
THINK_CLOSE_RE = re.compile(CLOSE_TAG_PATTERN, TAG_FLAGS)

# A tag cut off at the end of the text available so far.
MAX_TAG_FRAGMENT = 64
_FRAGMENT_RUN = re.compile(r"[A-Za-z0-9_.:\-]*\Z", re.ASCII)
_ASCII_LETTER = re.compile(r"[A-Za-z]", re.ASCII)

TagKind = Literal["open", "close"]


@dataclass(slots=True, frozen=True)
class TrailingTagPrefix:
    """Where a possibly unfinished tag starts, and which kind it could become."""

    index: int
    kind: TagKind


def find_think_close(text: str, start: int = 0) -> re.Match[str] | None:
    """First closing tag at or after `start`."""
    return THINK_CLOSE_RE.search(text, start)


def find_trailing_tag_prefix(text: str) -> TrailingTagPrefix | None:
    """Report a tag possibly cut off at the very end of `text`, else None.

    Only the last `MAX_TAG_FRAGMENT` characters are examined, so the cost does not
    depend on the length of `text`.
    """
    index = text.rfind("<", max(0, len(text) - MAX_TAG_FRAGMENT))
    if index < 0:
        return None
    run_start = index + 1
    closing = text.startswith("/", run_start)
    if closing:
        run_start += 1
    if _FRAGMENT_RUN.match(text, run_start) is None:
        return None
    run = text[run_start:]
    if ":" in run:
        word = run.rsplit(":", 1)[1]
        if not TAG_WORD.startswith(word.lower()):
            return None
    elif run and _ASCII_LETTER.match(run) is None:
        return None
    kind: TagKind = "close" if closing or not run else "open"
    return TrailingTagPrefix(index, kind)
