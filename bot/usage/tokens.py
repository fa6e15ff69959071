"""Token counts of one answer: the provider's own numbers, summed over the responses of a
tool loop, or an estimate from characters when the provider reported none."""

from __future__ import annotations

import math
from typing import Any

from providers.types import ChatRequest, Usage

CHARS_PER_TOKEN = 4  # a common rule of thumb for English text; only used without real counts


# One type from the provider's edge to the database: an answer is recorded as the
# provider's own `Usage`, no second conversion.
TokenCounts = Usage


def add_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Both responses' counts added field by field; a field neither reported stays None."""
    if first is None or second is None:
        return first or second
    return first + second


def _estimate(characters: int) -> int:
    return math.ceil(characters / CHARS_PER_TOKEN)


def _characters(content: Any) -> int:
    """Text characters of a message, whether plain text or a list of parts (images count none)."""
    if isinstance(content, str):
        return len(content)
    return sum(len(text) for part in content or () if isinstance(text := getattr(part, "text", None), str))


def prompt_characters(request: ChatRequest) -> int:
    return len(request.system or "") + sum(_characters(m.content) for m in request.messages)


def counts_for(usage: Usage | None, request: ChatRequest, answer: str) -> Usage:
    """The provider's own counts, as they came, when it sent input or output; else
    characters/4, marked estimated. Searches are never guessed: the reported ones stay."""
    if usage is not None and (usage.input_tokens is not None or usage.output_tokens is not None):
        return usage
    return Usage(_estimate(prompt_characters(request)), _estimate(len(answer)), estimated=True,
                 searches=usage.searches if usage is not None else None)
