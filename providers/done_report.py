"""What the `done` chunk reports, token usage and why the response ended, in one vocabulary.

Every adapter family reads its own provider's usage fields and finish reasons; the rules
they share live here. A stream may report usage several times (Anthropic's
`message_start` then `message_delta`, Gemini's running totals on every payload, the
OpenAI family's final chunk). `merge_report` keeps the provider's own fields merged,
later reports winning field by field, and the family converts the merged fields once,
at the end, into `providers.types.Usage`: a field only an early report carried (such as
Anthropic's cache counts) is not lost when a later report leaves it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.types import FinishReason, ProcessedChunk, Usage


def merge_report(into: dict[str, Any], report: Any) -> None:
    """Fold one usage report (a JSON object) into the stream's merged fields; nulls do not erase."""
    if isinstance(report, dict):
        for name, value in report.items():
            if value is not None:
                into[name] = value


def count(value: Any) -> int | None:
    """A token count as reported; None when it is missing or not a whole number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def sum_reported(*values: int | None) -> int | None:
    """The sum of the counts that were reported; None when none was."""
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def usage_of(
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    reasoning_tokens: int | None = None,
    cached_input_tokens: int | None = None,
    total_tokens: int | None = None,
) -> Usage | None:
    """A `Usage`; the total is input + output when the provider gave none. None if nothing was reported."""
    if total_tokens is None and input_tokens is not None and output_tokens is not None:
        total_tokens = input_tokens + output_tokens
    usage = Usage(input_tokens, output_tokens, reasoning_tokens, cached_input_tokens, total_tokens)
    return None if usage == _NOTHING else usage


_NOTHING = Usage()


def finish_reason_of(
    native: Any, table: Mapping[str, FinishReason], *, made_calls: bool
) -> FinishReason | None:
    """The contract's reason for a provider's own one (None when it gave none).

    Reasons the table does not know are "other". A response that ended with tool calls
    is "tool_calls" even where the provider says it just stopped (some OpenAI-compatible
    servers, Gemini, calls parsed out of the text): the caller must run the tools.
    """
    if not isinstance(native, str):
        return None
    reason = table.get(native, "other")
    if made_calls and reason == "stop":
        return "tool_calls"
    return reason


def done_chunk(
    finish_reason: FinishReason | None, usage: Usage | None, serving_provider: str | None = None
) -> ProcessedChunk:
    """The `done` chunk that ends a stream cleanly."""
    return ProcessedChunk(
        type="done", finish_reason=finish_reason, usage=usage, serving_provider=serving_provider
    )
