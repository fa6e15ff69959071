"""Shared helpers for the Anthropic and Gemini adapter suites.

Own fixtures written from each provider's documented wire format (so the suites mean
something without the shared corpus), `run_stream`, which drives a real adapter
through the replay server and the real SDK and summarizes what came out, and the
robustness checks (cuts, splits, mutations) both providers' suites run.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.adapter import create_adapter, normalized_stream
from providers.types import (
    CHUNK_TYPES,
    ERROR_TYPES,
    ChatRequest,
    FunctionCall,
    Message,
    ProcessedChunk,
)
from tests.corpus import CORPUS
from tests.fakes.provider_server import Reply, split_events

HELLO = ChatRequest(messages=[Message("user", "hi")])


@dataclass
class Outcome:
    """What one normalized stream produced, in the terms the rules talk about."""

    chunks: list[ProcessedChunk]
    text: str = ""
    thoughts: list[tuple[str, str]] = field(default_factory=list)
    calls: list[FunctionCall] = field(default_factory=list)
    done: ProcessedChunk | None = None
    error: Any = None

    @property
    def call_summary(self) -> list[tuple[str, dict, bool]]:
        return [(c.name, c.args, c.arguments_truncated) for c in self.calls]

    def thought_text(self, kind: str) -> str:
        return "".join(text for k, text in self.thoughts if k == kind)


def summarize(chunks: list[ProcessedChunk]) -> Outcome:
    """Check the chunk-shape invariants and summarize."""
    outcome = Outcome(chunks=chunks)
    for chunk in chunks:
        assert chunk.type in CHUNK_TYPES
        assert outcome.error is None, "nothing may follow an error chunk"
        assert outcome.done is None, "nothing may follow the done chunk"
        for entry in chunk.thoughts or ():
            outcome.thoughts.append((entry.kind, entry.text))
        if chunk.type == "text":
            assert isinstance(chunk.content, str)
            outcome.text += chunk.content
        elif chunk.type == "function_call":
            assert chunk.function_call is not None
            outcome.calls.append(chunk.function_call)
        elif chunk.type == "error":
            assert chunk.error is not None and chunk.error.message
            assert chunk.error.type in ERROR_TYPES and isinstance(chunk.error.retryable, bool)
            outcome.error = chunk.error
        else:
            outcome.done = chunk
    assert outcome.error is not None or outcome.done is not None, "a stream ends with done or an error"
    return outcome


async def run_stream(
    server, provider: str, reply: Reply, request: ChatRequest = HELLO, **options: Any
) -> Outcome:
    server.reply(reply)
    options.setdefault("timeout", 10)
    key = "sk-ant-test-key-0000" if provider == "anthropic" else "AIza-test-key-0000"
    model = "claude-test" if provider == "anthropic" else "gemini-test"
    adapter = create_adapter(provider, api_key=key, model=model, base_url=server.url, **options)
    try:
        chunks = [chunk async for chunk in normalized_stream(adapter, request)]
    finally:
        await adapter.aclose()
    return summarize(chunks)


def assert_cut_consistent(cut: Outcome, full: Outcome) -> None:
    """A cut stream: an error at the end, text a prefix, calls whole or flagged."""
    assert cut.error is not None, "a cut stream ends with an error chunk"
    assert cut.done is None
    assert cut.error.retryable or (full.error is not None and cut.error.type == full.error.type)
    assert full.text.startswith(cut.text)
    full_calls = full.call_summary
    for i, call in enumerate(cut.calls):
        if not call.arguments_truncated:
            assert full_calls[i] == (call.name, call.args, False)


# ---- Anthropic fixtures (Messages API streaming format) --------------------------------------
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


# ---- Gemini fixtures (streamGenerateContent?alt=sse format) ---------------------------------
def gemini_body(payloads: list[Any]) -> bytes:
    return "".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\r\n\r\n" for p in payloads
    ).encode()


def g_chunk(parts: list[dict], finish: str | None = None, usage: dict | None = None) -> dict:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test-001",
                               "responseId": "resp-fixture"}
    if usage:
        payload["usageMetadata"] = usage
    return payload


GEMINI_SIG_A = "CiIBVKhc7vSigA+/fixture=="
GEMINI_SIG_B = "CiIBVKhc7vSigB+/fixture=="

GEMINI_THINK_TEXT = gemini_body([
    g_chunk([{"text": "**Planning**\n\nThink about colors.", "thought": True}],
            usage={"promptTokenCount": 9, "totalTokenCount": 30, "thoughtsTokenCount": 21}),
    g_chunk([{"text": "The sky ", "thoughtSignature": GEMINI_SIG_A}]),
    g_chunk([{"text": "is blue."}], finish="STOP",
            usage={"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 35,
                   "thoughtsTokenCount": 21}),
])

GEMINI_PARALLEL_CALLS = gemini_body([
    g_chunk([{"text": "Let me look.", "thought": True}]),
    g_chunk([
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": GEMINI_SIG_B},
        {"functionCall": {"name": "get_time", "args": {"tz": "Asia/Tokyo", "format": {"h24": True}}}},
    ], finish="STOP", usage={"promptTokenCount": 40, "candidatesTokenCount": 12, "totalTokenCount": 52}),
])

GEMINI_SAFETY_AFTER_TEXT = gemini_body([
    g_chunk([{"text": "Here is"}]),
    g_chunk([{"text": " a start"}], finish="SAFETY"),
])

GEMINI_PROMPT_BLOCKED = gemini_body([
    {"promptFeedback": {"blockReason": "BLOCKLIST"}, "usageMetadata": {"promptTokenCount": 4}},
])

GEMINI_UNSPECIFIED_BLOCK_IS_NOT_A_BLOCK = gemini_body([
    {"promptFeedback": {"blockReason": "BLOCKED_REASON_UNSPECIFIED"}, **g_chunk([{"text": "fine"}], "STOP")},
])

GEMINI_MIDSTREAM_ERROR_DATA = gemini_body([
    g_chunk([{"text": "Part"}]),
    {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
               "status": "UNAVAILABLE"}},
])

# An error after the stream started, written as bare pretty-printed JSON lines.
GEMINI_MIDSTREAM_ERROR_BARE = gemini_body([g_chunk([{"text": "Part"}])]) + (
    b'{\n  "error": {\n    "code": 429,\n    "message": "Resource has been exhausted '
    b'(e.g. check quota).",\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n'
)

GEMINI_MALFORMED_CALL = gemini_body([g_chunk([], finish="MALFORMED_FUNCTION_CALL")])

# Every usage field Gemini reports, as running totals: 100 prompt tokens (40 from cached
# content), 30 thinking tokens, then 20 answer tokens.
GEMINI_ALL_USAGE = gemini_body([
    g_chunk([{"text": "Count them.", "thought": True}],
            usage={"promptTokenCount": 100, "cachedContentTokenCount": 40, "thoughtsTokenCount": 30,
                   "totalTokenCount": 130}),
    g_chunk([{"text": "Counted."}], finish="STOP",
            usage={"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 30,
                   "cachedContentTokenCount": 40, "totalTokenCount": 150}),
])


# ---- robustness helpers ----------------------------------------------------------------------
def essentials(out: Outcome) -> tuple:
    """What must not depend on how the bytes were split in transport."""
    error = None if out.error is None else (out.error.type, out.error.retryable, out.error.code)
    calls = [(c.name, c.args, c.id, c.thought_signature, c.arguments_truncated, c.provider_fields)
             for c in out.calls]
    done = None if out.done is None else (out.done.finish_reason, out.done.usage)
    return out.text, out.thoughts, calls, done, error


def pure_run(provider: str, body: bytes) -> Outcome:
    """The adapter's pure half on a whole body: decode, process, stop at the first error."""
    from providers.anthropic_native.events import AnthropicStream
    from providers.gemini.events import GeminiStream
    from providers.gemini.sse import GeminiSSEDecoder
    from providers.sdk_adapter import END_OF_BODY
    from providers.streaming import SSEDecoder
    from providers.types import RawStreamChunk

    adapter = create_adapter(provider, api_key="k", model="m")
    if provider == "anthropic":
        state: Any = AnthropicStream()
        decoder: Any = SSEDecoder()
    else:
        state, decoder = GeminiStream(), GeminiSSEDecoder()
    raws = [RawStreamChunk(d, provider, {"event": e, "stream": state}) for e, d in decoder.feed(body)]
    raws += [RawStreamChunk(d, provider, {"event": e, "stream": state, "tail": True})
             for e, d in decoder.feed(b"\n\n")]
    raws.append(RawStreamChunk(None, provider, {"event": END_OF_BODY, "stream": state}))
    chunks: list[ProcessedChunk] = []
    for raw in raws:
        produced = adapter.process_chunk(raw)
        for chunk in produced:
            chunks.append(chunk)
            if chunk.type == "error":
                return summarize(chunks)
    return summarize(chunks)


JUNK_VALUES: list[Any] = [None, 7, -1.5, "x", "", [], [1, "a"], {}, {"k": None}, True]


def json_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside a decoded JSON document."""
    paths = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            paths.extend(json_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            paths.extend(json_paths(item, (*prefix, i)))
    return paths


def replace_at(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replace_at(value[path[0]], path[1:], new)
    return copy


def mutate(body: bytes, kind: str, pick: int, junk: int, cut: int) -> tuple[bytes, bool]:
    """One mutation of an SSE body; returns the body and whether JSON was broken."""
    lines = body.decode().replace("\r\n", "\n").split("\n")
    data_lines = [i for i, line in enumerate(lines) if line.startswith("data: ")]
    if kind == "drop_line":
        del lines[pick % len(lines)]
        return "\n".join(lines).encode(), False
    index = data_lines[pick % len(data_lines)]
    payload = lines[index][6:]
    if kind == "break_json":
        at = cut % len(payload)
        lines[index] = "data: " + payload[:at] + payload[at + 1 + junk % 3:] + ("{" if junk % 2 else "")
        try:
            json.loads(lines[index][6:])
        except ValueError:
            return "\n".join(lines).encode(), True
        return "\n".join(lines).encode(), False
    document = json.loads(payload)
    paths = json_paths(document)
    if paths:
        path = paths[cut % len(paths)]
        document = replace_at(document, path, JUNK_VALUES[junk % len(JUNK_VALUES)])
    lines[index] = "data: " + json.dumps(document)
    return "\n".join(lines).encode(), False


# ---- the robustness checks both providers' suites run ----------------------------------------
MUTATION_KINDS = ["drop_line", "break_json", "wrong_type"]
FUZZ_SETTINGS = settings(max_examples=250, deadline=None)  # with `@fuzz_inputs(OWN)`


def fuzz_inputs(own: dict[str, bytes]):
    return given(source=st.sampled_from(sorted(own)), kind=st.sampled_from(MUTATION_KINDS),
                 pick=st.integers(0, 10_000), junk=st.integers(0, 100), cut=st.integers(0, 10_000))


def body_of(own: dict[str, bytes], name: str) -> bytes:
    """An own fixture by name, else a corpus stream."""
    if name in own:
        return own[name]
    assert CORPUS is not None
    return Reply.from_corpus(CORPUS, name).body


async def check_cuts(server, provider: str, body: bytes, at: str) -> None:
    """Cut the body after every event (`at="events"`) or at six seeded byte offsets."""
    full = await run_stream(server, provider, Reply(body=body))
    if at == "events":
        cuts = [{"cut_after_events": n} for n in range(len(split_events(body)))]
    else:
        rng = random.Random(len(body))
        cuts = [{"cut_after_bytes": n} for n in sorted({rng.randrange(1, len(body)) for _ in range(6)})]
    for cut in cuts:
        assert_cut_consistent(await run_stream(server, provider, Reply(body=body, **cut)), full)


async def check_cut_json_at_a_clean_end(server, provider: str, body: bytes) -> tuple[Outcome, Outcome]:
    """The last event's JSON cut, then a clean end of body: interrupted (retryable); the
    same event completed by its blank line: a malformed stream (not retryable)."""
    body = body.rstrip(b"\r\n")
    cut = body[: (body.rindex(b"data: ") + 6 + len(body)) // 2]
    tail = await run_stream(server, provider, Reply(body=cut))
    whole = await run_stream(server, provider, Reply(body=cut + b"\n\n"))
    assert (tail.error.type, tail.error.retryable) == ("provider_overloaded", True)
    assert (whole.error.type, whole.error.retryable) == ("api_error", False)
    return tail, whole


async def check_transport_splits(server, provider: str, body: bytes) -> None:
    """Re-splitting the body in transport does not change the outcome."""
    whole = essentials(await run_stream(server, provider, Reply(body=body)))
    for seed in (1, 2, 3):
        pieces = Reply(body=body, random_pieces=seed, max_piece=23)
        assert essentials(await run_stream(server, provider, pieces)) == whole


async def check_pure_half_matches_server(server, provider: str, body: bytes) -> None:
    served = await run_stream(server, provider, Reply(body=body))
    assert essentials(pure_run(provider, body)) == essentials(served)


def fuzzed_pure_run(provider: str, body: bytes, kind: str, pick: int, junk: int, cut: int) -> Outcome:
    """The pure half on one mutation; broken JSON must end in an error chunk, never done."""
    body, broken = mutate(body, kind, pick, junk, cut)
    out = pure_run(provider, body)  # summarize() checks every chunk's shape
    if broken:
        assert out.error is not None and out.done is None
    return out


async def check_fuzz_through_server(server, provider: str, own: dict[str, bytes]) -> None:
    """A seeded sample of the mutations through the server gives the pure half's outcome."""
    rng = random.Random(4)
    for _ in range(30):
        source = rng.choice(sorted(own))
        kind = rng.choice(MUTATION_KINDS)
        body, _ = mutate(own[source], kind, rng.randrange(10_000), rng.randrange(100), rng.randrange(10_000))
        served = await run_stream(server, provider, Reply(body=body))
        assert essentials(served) == essentials(pure_run(provider, body))
