"""Token counts of one answer: the provider's own numbers, summed over the responses of a
tool loop, or an estimate from characters when the provider reported none."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from providers.types import ChatRequest, Usage

CHARS_PER_TOKEN = 4  # a common rule of thumb for English text; only used without real counts


def add_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Both responses' counts added field by field; a field neither reported stays None."""
    if first is None or second is None:
        return first or second

    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(plus(first.input_tokens, second.input_tokens), plus(first.output_tokens, second.output_tokens),
                 plus(first.reasoning_tokens, second.reasoning_tokens),
                 plus(first.cached_input_tokens, second.cached_input_tokens),
                 plus(first.total_tokens, second.total_tokens))


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """What one answer is recorded as; `estimated` marks counts guessed from characters."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        """Input plus output (reasoning is part of output): what a limit counts."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenCounts) -> TokenCounts:
        """Two answers' counts together (estimated if either was)."""
        return TokenCounts(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                           self.reasoning_tokens + other.reasoning_tokens,
                           self.cached_input_tokens + other.cached_input_tokens, self.estimated or other.estimated)


def _estimate(characters: int) -> int:
    return math.ceil(characters / CHARS_PER_TOKEN)


def _characters(content: Any) -> int:
    """Text characters of a message, whether plain text or a list of parts (images count none)."""
    if isinstance(content, str):
        return len(content)
    return sum(len(text) for part in content or () if isinstance(text := getattr(part, "text", None), str))


def prompt_characters(request: ChatRequest) -> int:
    return len(request.system or "") + sum(_characters(m.content) for m in request.messages)


def counts_for(usage: Usage | None, request: ChatRequest, answer: str) -> TokenCounts:
    """The provider's counts when it sent input or output; else characters/4, marked estimated."""
    if usage is not None and (usage.input_tokens is not None or usage.output_tokens is not None):
        return TokenCounts(usage.input_tokens or 0, usage.output_tokens or 0, usage.reasoning_tokens or 0,
                           usage.cached_input_tokens or 0)
    return TokenCounts(_estimate(prompt_characters(request)), _estimate(len(answer)), estimated=True)
