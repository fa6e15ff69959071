"""Anthropic Messages API streams, written from the documented wire format.

Own fixtures, so the adapter suites mean something without the shared corpus: named
SSE events (`message_start`, `content_block_*`, `message_delta`, `message_stop`) built
with the `a_*` block builders and served with `Reply.named_sse`.
"""

from __future__ import annotations

from typing import Any


def _anthropic_message(usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": "msg_fixture", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": usage or {"input_tokens": 25, "output_tokens": 1},
    }


def anthropic_events(blocks: list[list[tuple[str, dict]]], stop_reason: str, output_tokens: int,
                     *, error: dict | None = None, start_usage: dict | None = None) -> list[tuple[str, dict]]:
    events: list[tuple[str, dict]] = [
        ("message_start", {"type": "message_start", "message": _anthropic_message(start_usage)}),
        ("ping", {"type": "ping"}),
    ]
    for block_events in blocks:
        events.extend(block_events)
    if error is not None:
        events.append(("error", {"type": "error", "error": error}))
        return events
    events.append(("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def a_start(index: int, block: dict) -> tuple[str, dict]:
    return ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def a_delta(index: int, delta: dict) -> tuple[str, dict]:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def a_stop(index: int) -> tuple[str, dict]:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def a_text_block(index: int, pieces: list[str]) -> list[tuple[str, dict]]:
    return [a_start(index, {"type": "text", "text": ""}),
            *[a_delta(index, {"type": "text_delta", "text": p}) for p in pieces], a_stop(index)]


def a_thinking_block(index: int, pieces: list[str], signature: str) -> list[tuple[str, dict]]:
    return [a_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
            *[a_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces],
            a_delta(index, {"type": "signature_delta", "signature": signature}), a_stop(index)]


def a_tool_block(index: int, ident: str, name: str, pieces: list[str]) -> list[tuple[str, dict]]:
    return [a_start(index, {"type": "tool_use", "id": ident, "name": name, "input": {}}),
            *[a_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces],
            a_stop(index)]


SIGNATURE = "EqQBCkYIBxgCKkBsig+fixture/A=="

# Thinking, a signature, text, then two parallel tool calls with split arguments.
ANTHROPIC_THINK_TOOLS = anthropic_events([
    a_thinking_block(0, ["The user wants ", "weather for two cities."], SIGNATURE),
    a_text_block(1, ["Checking ", "both cities."]),
    a_tool_block(2, "toolu_01", "get_weather", ["", '{"ci', 'ty": "Par', 'is"}']),
    a_tool_block(3, "toolu_02", "get_weather", ['{"city": "Tokyo", "units": ["c"', "]}"]),
], "tool_use", 88)

ANTHROPIC_REDACTED = anthropic_events([
    [a_start(0, {"type": "redacted_thinking", "data": "ENCRYPTED-OPAQUE-DATA=="}), a_stop(0)],
    a_text_block(1, ["Hello", " there."]),
], "end_turn", 12)

ANTHROPIC_RATE_LIMITED_MIDSTREAM = anthropic_events(
    [[a_start(0, {"type": "text", "text": ""}), a_delta(0, {"type": "text_delta", "text": "Partial"})]],
    "", 0, error={"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"},
)

# max_tokens reached inside the arguments: the block stops with cut JSON.
ANTHROPIC_MAX_TOKENS_TOOL = anthropic_events([
    a_tool_block(0, "toolu_09", "search", ['{"query": "rust async", "limit": 1', "0, \"lang"]),
], "max_tokens", 4096)

# Every usage field Anthropic reports: 40 fresh input tokens, 20 written to the cache and
# 40 read from it (all 100 went to the model), then 50 output tokens in message_delta.
ANTHROPIC_CACHED_USAGE = anthropic_events(
    [a_text_block(0, ["Counted."])], "end_turn", 50,
    start_usage={"input_tokens": 40, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 40,
                 "output_tokens": 1},
)
