"""Token usage in one shape, whatever the provider reported (pure).

Adapters put the provider's own usage object in `metadata["usage"]`:
- OpenAI family: `prompt_tokens`, `completion_tokens`, `total_tokens`,
  `completion_tokens_details.reasoning_tokens`, `prompt_tokens_details.cached_tokens`;
- Anthropic: `input_tokens`, `output_tokens`, `cache_creation_input_tokens`,
  `cache_read_input_tokens` (all three input counts are prompt tokens);
- Gemini: `promptTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`,
  `totalTokenCount`, `cachedContentTokenCount` (or their snake_case SDK names); thought
  tokens are output the model was billed for, so they count as completion tokens.
Several chunks may carry usage; later reports win field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True, frozen=True)
class Usage:
    """Normalized token counts; None when the provider did not say."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_prompt_tokens: int | None = None


def _get(source: Any, *names: str) -> Any:
    for name in names:
        value = source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)
        if value is not None:
            return value
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def normalize_usage(raw: Any) -> Usage | None:
    """Map any provider's usage object (dict or SDK object) to `Usage`; None if empty."""
    if raw is None:
        return None
    if _get(raw, "input_tokens", "output_tokens") is not None:  # Anthropic
        cache_write = _int(_get(raw, "cache_creation_input_tokens"))
        cache_read = _int(_get(raw, "cache_read_input_tokens"))
        prompt = _sum(_int(_get(raw, "input_tokens")), cache_write, cache_read)
        completion = _int(_get(raw, "output_tokens"))
        usage = Usage(prompt, completion, None, None, cache_read)
    elif _get(raw, "promptTokenCount", "candidatesTokenCount", "totalTokenCount",
              "prompt_token_count", "candidates_token_count", "total_token_count") is not None:
        thoughts = _int(_get(raw, "thoughtsTokenCount", "thoughts_token_count"))
        candidates = _int(_get(raw, "candidatesTokenCount", "candidates_token_count"))
        usage = Usage(
            _int(_get(raw, "promptTokenCount", "prompt_token_count")),
            _sum(candidates, thoughts),
            _int(_get(raw, "totalTokenCount", "total_token_count")),
            thoughts,
            _int(_get(raw, "cachedContentTokenCount", "cached_content_token_count")),
        )
    else:
        details = _get(raw, "completion_tokens_details", "output_tokens_details")
        prompt_details = _get(raw, "prompt_tokens_details", "input_tokens_details")
        usage = Usage(
            _int(_get(raw, "prompt_tokens")),
            _int(_get(raw, "completion_tokens")),
            _int(_get(raw, "total_tokens")),
            _int(_get(details, "reasoning_tokens")) if details is not None else None,
            _int(_get(prompt_details, "cached_tokens")) if prompt_details is not None else None,
        )
    if usage == Usage():
        return None
    return usage


def merge_usage(previous: Usage | None, latest: Usage | None) -> Usage | None:
    """Latest wins, field by field; the total is derived when nobody reported it."""
    if latest is None:
        return previous
    if previous is None:
        merged = latest
    else:
        merged = Usage(*(
            new if new is not None else old
            for old, new in zip(_fields(previous), _fields(latest), strict=True)
        ))
    if merged.prompt_tokens is not None and merged.completion_tokens is not None:
        derived = merged.prompt_tokens + merged.completion_tokens
        if merged.total_tokens is None or (latest.total_tokens is None and merged.total_tokens < derived):
            merged = Usage(merged.prompt_tokens, merged.completion_tokens, derived,
                           merged.reasoning_tokens, merged.cached_prompt_tokens)
    return merged


def _fields(usage: Usage) -> tuple[int | None, ...]:
    return (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens,
            usage.reasoning_tokens, usage.cached_prompt_tokens)
