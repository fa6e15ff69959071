"""Streams in the OpenAI chat-completions wire format, written for the tests.

Shapes follow the documented format: `data: <chunk json>` events ending with
`data: [DONE]`; OpenRouter adds a chunk-level `provider`, `reasoning` /
`reasoning_details` deltas and `: OPENROUTER PROCESSING` keep-alive comments.
The adapter suites build bodies from `chunk`/`sse_body`; the chat end-to-end tests and
the delivery bench script whole replies with `openai_stream`.
"""

from __future__ import annotations

import json
from typing import Any

from providers import ToolSpec
from tests.support.fake_provider_server import Reply


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": choices, **top}


def usage_chunk(prompt: int = 9, completion: int = 4, **extra: Any) -> dict[str, Any]:
    return chunk(None, usage={"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion, **extra})


def tool_delta(index: int, *, id: str | None = None, name: str | None = None,
               arguments: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    item: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        item.update(id=id, type="function")
    return item


def sse_body(events: list[Any], *, done: bool = True, comments: dict[int, str] | None = None) -> bytes:
    """Events (dicts or raw strings) as an SSE body; `comments` inserts `: text` before event i."""
    out = []
    for i, event in enumerate(events):
        if comments and i in comments:
            out.append(f": {comments[i]}\n\n")
        out.append(f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


TEXT = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Hel"}),
    chunk({"content": "lo!"}),
    chunk({}, "stop"),
    usage_chunk(9, 2),
]

REASONING_CONTENT = [
    chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
    chunk({"content": None, "reasoning_content": "The user greets. "}),
    chunk({"content": None, "reasoning_content": "Reply kindly."}),
    chunk({"content": "Hi there!", "reasoning_content": None}),
    chunk({"content": ""}, "stop"),
    usage_chunk(5, 12, completion_tokens_details={"reasoning_tokens": 8}, prompt_cache_hit_tokens=3),
]

THINK_TAGS_SPLIT = [
    chunk({"content": "<thi"}),
    chunk({"content": "nk>weighing opt"}),
    chunk({"content": "ions</th"}),
    chunk({"content": "ink>The answer is 42."}),
    chunk({}, "stop"),
]

PARALLEL_TOOL_CALLS = [
    chunk({"role": "assistant", "content": None,
           "tool_calls": [tool_delta(0, id="call_a", name="get_weather", arguments="")]}),
    chunk({"tool_calls": [tool_delta(0, arguments='{"city": "Pa'),
                          tool_delta(1, id="call_b", name="get_time", arguments='{"tz"')]}),
    chunk({"tool_calls": [tool_delta(1, arguments=': "UTC"}'), tool_delta(0, arguments='ris"}')]}),
    chunk({}, "tool_calls"),
    usage_chunk(20, 30),
]

TRUNCATED_ARGUMENTS = [
    chunk({"tool_calls": [tool_delta(0, id="call_t", name="search", arguments='{"q": "cats", ')]}),
    chunk({"tool_calls": [tool_delta(0, arguments='"limit": 1')]}),
    chunk({}, "length"),
]

MIDSTREAM_ERROR = [
    chunk({"content": "Partial"}),
    {"error": {"message": "The server had an error while processing your request.",
               "type": "server_error", "code": None}},
]

OPENROUTER_REASONING_TOOL = [
    chunk({"role": "assistant", "content": "", "reasoning": "Need the weather.",
           "reasoning_details": [{"type": "reasoning.text", "text": "Need the", "index": 0,
                                  "format": "anthropic-claude-v1"}]}, provider="  Anthropic "),
    chunk({"content": "", "reasoning": None,
           "reasoning_details": [{"type": "reasoning.text", "text": " weather.", "signature": "sig-1",
                                  "index": 0, "format": "anthropic-claude-v1"}]}, provider="Other"),
    chunk({"content": "Checking.",
           "tool_calls": [tool_delta(0, id="toolu_1", name="get_weather", arguments='{"city":"Oslo"}')]},
          provider="Anthropic"),
    chunk({}, "tool_calls", provider="Anthropic"),
    usage_chunk(3, 4, cost=0.0012),
]
OPENROUTER_COMMENTS = {0: "OPENROUTER PROCESSING", 2: "OPENROUTER PROCESSING"}

OPENROUTER_ENCRYPTED = [
    chunk({"content": "", "reasoning_details": [{"type": "reasoning.encrypted", "data": "gAAAA", "index": 0,
                                                 "format": "openai-responses-v1"}]}, provider="OpenAI"),
    chunk({"content": "Done."}, "stop", provider="OpenAI"),
]

OPENROUTER_FINISH_ERROR = [
    chunk({"content": "Hello"}, provider="OpenAI"),
    chunk({"content": ""}, "error", provider="OpenAI",
          error={"code": 502, "message": "Upstream provider failed"}),
]

DEEPSEEK_TOOL_CALL = [
    chunk({"reasoning_content": "Weather needs a tool."}),
    chunk({"content": None, "tool_calls": [tool_delta(0, id="call_00_x", name="weather",
                                                      arguments='{"location": "Rome"}')]}),
    chunk({"content": ""}, "tool_calls"),
]

# Every usage field the family reports: prompt 100 (40 of them cached), completion 50
# (30 of them reasoning). Earlier chunks carry `"usage": null`, as with include_usage.
USAGE_ALL_FIELDS = [
    chunk({"role": "assistant", "content": ""}, usage=None),
    chunk({"content": "Counted."}, usage=None),
    chunk({}, "stop", usage=None),
    usage_chunk(100, 50, completion_tokens_details={"reasoning_tokens": 30},
                prompt_tokens_details={"cached_tokens": 40}),
]

SPILL = [
    chunk({"reasoning_content": "Think briefly"}),
    chunk({"content": "let me see.Sure thing, here"}),
    chunk({"content": " it is."}, "stop"),
]

VERBATIM = [
    chunk({"content": "Sure. `get_"}),
    chunk({"content": 'time({"tz": "UTC"})` done'}),
    chunk({}, "stop"),
]

# Tools a request offers (verbatim tool calling, parallel calls).
TOOLS = (
    ToolSpec("get_time", "Current time", {"type": "object", "properties": {"tz": {"type": "string"}},
                                          "required": ["tz"]}),
    ToolSpec("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}}),
)


# ---- whole scripted replies (chat end-to-end tests, bench/delivery.py) -------------------
def long_answer_with_code(total: int = 6000) -> str:
    """Prose, a long fenced Python block that a 2,000-character message cannot hold, more prose."""
    prose = ("Streaming answers must arrive in order and in full. This paragraph is filler "
             "that reads like an explanation of the code below, sentence after sentence. ")
    code_lines = [f"    result_{i} = compute(value_{i}, factor={i})  # step {i}" for i in range(60)]
    code = "```python\ndef pipeline():\n" + "\n".join(code_lines) + "\n    return result_0\n```"
    head = (prose * 6).strip()
    text = f"{head}\n\n{code}\n\n"
    tail_unit = "The end is near, and every word of it must still be delivered. "
    while len(text) < total:
        text += tail_unit
    return text[:total].rstrip() + " Done."


def chunks_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def openai_events(pieces: list[str], *, reasoning: list[str] = (), finish: str | None = "stop",
                  model: str = "fake-model") -> list[dict[str, Any]]:
    """chat.completion.chunk payloads: optional `reasoning_content` first, then content pieces."""
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": r}) for r in reasoning]
    events += [chunk({"content": p}) for p in pieces]
    if finish is not None:
        events.append(chunk({}, finish))
        events.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
                       "model": model, "choices": [],
                       "usage": {"prompt_tokens": 12, "completion_tokens": 345, "total_tokens": 357}})
    return events


def openai_stream(text: str, *, piece: int = 40, event_delay: float = 0.0,
                  reasoning: list[str] = (), **options: Any) -> Reply:
    return Reply.sse(openai_events(chunks_of(text, piece), reasoning=list(reasoning)),
                     event_delay=event_delay, **options)


def openai_midstream_error(text: str, *, piece: int = 40, event_delay: float = 0.0) -> Reply:
    """Some text, then an OpenAI-style `{"error": ...}` data event (a mid-stream failure)."""
    events: list[Any] = openai_events(chunks_of(text, piece), finish=None)
    events.append({"error": {"message": "The server had an error while processing your request.",
                             "type": "server_error", "code": "server_error"}})
    return Reply.sse(events, done=False, event_delay=event_delay)
