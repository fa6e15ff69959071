"""Small streams in the OpenAI chat-completions wire format, written for this suite.

Shapes follow the documented format: `data: <chunk json>` events ending with
`data: [DONE]`; OpenRouter adds a chunk-level `provider`, `reasoning` /
`reasoning_details` deltas and `: OPENROUTER PROCESSING` keep-alive comments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from providers import (
    ChatRequest,
    Message,
    ProcessedChunk,
    ToolSpec,
    create_adapter,
    normalized_stream,
)
from providers.endpoint_check import EndpointPolicy
from providers.types import FunctionCall, ProviderError


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


# ---- running an adapter and summarizing what came out ---------------------------------------

HELLO = ChatRequest(messages=[Message("user", "hi")])
TOOLS = (
    ToolSpec("get_time", "Current time", {"type": "object", "properties": {"tz": {"type": "string"}},
                                          "required": ["tz"]}),
    ToolSpec("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}}),
)


@dataclass
class Outcome:
    chunks: list[ProcessedChunk]
    text: str = ""
    raw_thoughts: str = ""
    redacted: int = 0
    calls: list[FunctionCall] = field(default_factory=list)
    done: ProcessedChunk | None = None
    error: ProviderError | None = None
    serving: set = field(default_factory=set)

    @classmethod
    def of(cls, chunks: list[ProcessedChunk]) -> Outcome:
        out = cls(chunks=chunks)
        for c in chunks:
            assert c.type in ("text", "function_call", "error", "done")
            if c.type == "text":
                assert isinstance(c.content, str)
                out.text += c.content
            elif c.type == "function_call":
                assert c.function_call is not None
                out.calls.append(c.function_call)
            elif c.type == "error":
                assert c.error is not None
                out.error = c.error
            else:
                out.done = c
            for t in c.thoughts or ():
                if t.kind == "raw":
                    out.raw_thoughts += t.text
                elif t.kind == "redacted":
                    out.redacted += 1
            if c.serving_provider is not None:
                out.serving.add(c.serving_provider)
        return out

    @property
    def last(self) -> ProcessedChunk:
        return self.chunks[-1]

    def comparable(self) -> tuple:
        calls = [(c.name, c.args, c.id, c.arguments_truncated, c.provider_fields) for c in self.calls]
        error = (self.error.type, self.error.retryable, self.error.code) if self.error else None
        done = None if self.done is None else (self.done.finish_reason, self.done.usage)
        return (self.text, self.raw_thoughts, self.redacted, calls, done, error, self.serving)


async def run(server, provider: str = "openai", request: ChatRequest = HELLO, *,
              base_url: str | None = None, key: str = "sk-test", **options) -> Outcome:
    options.setdefault("timeout", 5.0)
    # The replay server listens on loopback, which a custom endpoint may reach only when allowed.
    options.setdefault("endpoint_policy", EndpointPolicy(allow_private=True))
    adapter = create_adapter(provider, api_key=key, model="m-test",
                             base_url=base_url or f"{server.url}/v1", **options)
    try:
        chunks = [c async for c in normalized_stream(adapter, request)]
    finally:
        await adapter.aclose()
    return Outcome.of(chunks)
