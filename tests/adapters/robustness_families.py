"""The provider families the robustness suite (test_robustness.py) runs over.

One row per wire family: its own fixture streams (written from the documented wire
format, so the suite means something without the shared corpus; they also seed the
fuzz), the corpus folders it reads, how its adapter is pointed at the replay server, how
its pure half (decoder + `process_chunk`, no HTTP) is fed, and the few expectations that
name the family's own wording. Everything else in the suite is the same for every family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from providers.adapter import create_adapter, normalized_stream
from providers.endpoint_check import EndpointPolicy
from providers.types import ChatRequest, ProcessedChunk, RawStreamChunk
from tests.adapters import fixtures_native as native
from tests.adapters import fixtures_openai as fx
from tests.adapters.fixtures_native import Outcome, summarize
from tests.corpus import CORPUS, corpus_streams
from tests.fakes.provider_server import Reply


@dataclass(frozen=True)
class Stream:
    """One body and how to ask for it."""

    provider: str
    reply: Reply
    tools: bool = False  # the request offers tools and verbatim tool calling is on

    @property
    def body(self) -> bytes:
        return self.reply.body

    def request(self) -> ChatRequest:
        return ChatRequest(messages=native.HELLO.messages, tools=fx.TOOLS if self.tools else ())

    def options(self) -> dict[str, Any]:
        return {"verbatim_tool_calling": True} if self.tools else {}

    def with_body(self, body: bytes) -> Stream:
        return Stream(self.provider, Reply(body=body), self.tools)


@dataclass(frozen=True)
class Expected:
    """What one targeted case of a family gives: text shown, raw thoughts, the wording."""

    source: str | Stream  # an own stream's name, or the stream itself
    text: str = ""
    thoughts: tuple[tuple[str, str], ...] = ()  # (kind, text) entries, in order
    message: str = ""  # the error message (the interrupted one, in the cut JSON case)
    other_message: str = ""  # the cut JSON case: how the same event, completed, reads
    marker: bytes = b""  # the tool-argument cut goes just before these bytes
    drop: int = 0  # the clean-end case: how many last events are left out


@dataclass(frozen=True)
class Family:
    """One wire family: what it streams and how its adapter is reached and fed."""

    name: str
    own: dict[str, Stream]
    corpus: dict[str, str]  # corpus folder -> provider
    connect: Callable[[str], dict[str, Any]]  # replay server URL -> create_adapter keywords
    raws: Callable[[Stream, list[bytes]], Iterator[RawStreamChunk]]  # the pure half's input
    # Event boundaries cut through the server: None = every one; n = first, second,
    # middle, last and seeded others up to n (the OpenAI corpus runs to 400 events).
    server_cuts: int | None
    tool_cut: Expected  # a cut inside a call's arguments
    cut_json: Expected  # the last event's JSON cut (its message: interrupted)
    unfinished: Expected  # a clean end before the finish reason
    wrong_type: Expected  # text, then an event whose text has the wrong type
    fuzz_provider: str  # the provider the arbitrary-bytes fuzz reads as
    # What the `done` chunk reports whatever the body's values: "finish_reason", "usage".
    done_always_has: tuple[str, ...] = ()
    # The pure half emits nothing after an error without normalized_stream stopping it.
    quiet_after_error: bool = False

    def stream(self, name: str | Stream) -> Stream:
        """An own stream by name, else a corpus stream (provider from its folder)."""
        if isinstance(name, Stream):
            return name
        if name in self.own:
            return self.own[name]
        assert CORPUS is not None
        return Stream(self.corpus[name.split("/")[0]], Reply.from_corpus(CORPUS, name))

    def stream_names(self) -> list[str]:
        return sorted(self.own) + [n for folder in self.corpus for n in corpus_streams(folder)]


async def served_outcome(server, family: Family, stream: Stream, **reply_options: Any) -> Outcome:
    """The stream through the replay server, the real SDK and `normalized_stream`."""
    server.reply(stream.reply.with_options(**reply_options))
    adapter = create_adapter(stream.provider, **family.connect(server.url), timeout=10, **stream.options())
    try:
        chunks = [chunk async for chunk in normalized_stream(adapter, stream.request())]
    finally:
        await adapter.aclose()  # type: ignore[attr-defined]
    return summarize(chunks)


def pure_outcome(family: Family, stream: Stream, pieces: list[bytes] | None = None) -> Outcome:
    """The adapter's pure half on `pieces` (default: the whole body), as the server path
    would drive it: a raised failure becomes an error chunk, and the first error ends the
    stream, unless the family's half must go quiet after an error by itself (then the
    rest is fed too and `summarize` checks that nothing follows the error)."""
    # Never connects: the URL only satisfies providers that require one.
    adapter = create_adapter(stream.provider, **family.connect("http://127.0.0.1:9"), **stream.options())
    chunks: list[ProcessedChunk] = []
    try:
        for raw in family.raws(stream, [stream.body] if pieces is None else pieces):
            for chunk in adapter.process_chunk(raw):
                chunks.append(chunk)
                if chunk.type == "error" and not family.quiet_after_error:
                    return summarize(chunks)
    except Exception as exc:  # noqa: BLE001 - what normalized_stream does with a failure
        chunks.append(ProcessedChunk(type="error", error=adapter.handle_provider_error(exc)))
    return summarize(chunks)


def native_raws(stream: Stream, pieces: list[bytes]) -> Iterator[RawStreamChunk]:
    """What the native adapters' `relay_events` yields for these transport pieces."""
    from providers.anthropic_native.events import AnthropicStream
    from providers.gemini.events import GeminiStream
    from providers.gemini.sse import GeminiSSEDecoder
    from providers.sdk_adapter import END_OF_BODY
    from providers.streaming import SSEDecoder

    provider = stream.provider
    if provider == "anthropic":
        state: Any = AnthropicStream()
        decoder: Any = SSEDecoder()
    else:
        state, decoder = GeminiStream(), GeminiSSEDecoder()
    for piece in pieces:
        for event, data in decoder.feed(piece):
            yield RawStreamChunk(data, provider, {"event": event, "stream": state})
    for event, data in decoder.feed(b"\n\n"):
        yield RawStreamChunk(data, provider, {"event": event, "stream": state, "tail": True})
    yield RawStreamChunk(None, provider, {"event": END_OF_BODY, "stream": state})


def openai_raws(stream: Stream, pieces: list[bytes]) -> Iterator[RawStreamChunk]:
    """What the OpenAI-family adapter's `start_stream` yields for these transport pieces."""
    from providers.openai_compat.normalize import END_OF_BODY, FAILURE, new_stream_state
    from providers.streaming import SSEDecoder

    state = new_stream_state(stream.provider, stream.request(), verbatim_tool_calling=stream.tools)
    shared = {"stream": state}
    decoder = SSEDecoder()
    try:
        for piece in pieces:
            for event in decoder.feed(piece):
                yield RawStreamChunk(event, stream.provider, shared)
    except Exception as exc:  # noqa: BLE001 - the adapter relays a failure the same way
        yield RawStreamChunk((FAILURE, exc), stream.provider, shared)
        return
    for event in decoder.finish():
        yield RawStreamChunk(event, stream.provider, shared)
    yield RawStreamChunk(END_OF_BODY, stream.provider, shared)


# ---- the table -------------------------------------------------------------------------------
def _anthropic(events: list[tuple[str, dict]]) -> Stream:
    return Stream("anthropic", Reply.named_sse(events))


def _google(body: bytes) -> Stream:
    return Stream("google", Reply(body=body))


def _openai(provider: str, events: list[Any], tools: bool = False, **sse: Any) -> Stream:
    return Stream(provider, Reply(body=fx.sse_body(events, **sse)), tools)


ANTHROPIC = Family(
    name="anthropic",
    own={
        "own/think_tools": _anthropic(native.ANTHROPIC_THINK_TOOLS),
        "own/redacted": _anthropic(native.ANTHROPIC_REDACTED),
        "own/midstream_rate_limit": _anthropic(native.ANTHROPIC_RATE_LIMITED_MIDSTREAM),
        "own/max_tokens_tool": _anthropic(native.ANTHROPIC_MAX_TOKENS_TOOL),
    },
    corpus={"anthropic": "anthropic"},
    connect=lambda url: {"api_key": "sk-ant-test-key-0000", "model": "claude-test", "base_url": url},
    raws=native_raws,
    server_cuts=None,
    # Inside the first call's argument pieces.
    tool_cut=Expected("own/think_tools", text="Checking both cities.", marker=b'ty\\": \\"Par',
                      thoughts=(("raw", "The user wants "), ("raw", "weather for two cities."),
                                ("signature", native.SIGNATURE))),
    cut_json=Expected("own/redacted", message="Anthropic stream interrupted: the last event is cut",
                      other_message="malformed Anthropic stream: event 'message_stop' data is not JSON ("),
    unfinished=Expected("own/redacted", text="Hello there.", drop=2),
    wrong_type=Expected(_anthropic(native.anthropic_events(
        [[*native.a_text_block(0, ["ok"]), native.a_delta(0, {"type": "text_delta", "text": 5})]],
        "end_turn", 3)), text="ok", message="text_delta without text"),
    fuzz_provider="anthropic",
    done_always_has=("usage",),  # message_start carries it
)

GEMINI = Family(
    name="gemini",
    own={
        "own/think_text": _google(native.GEMINI_THINK_TEXT),
        "own/parallel_calls": _google(native.GEMINI_PARALLEL_CALLS),
        "own/safety_after_text": _google(native.GEMINI_SAFETY_AFTER_TEXT),
        "own/midstream_error_data": _google(native.GEMINI_MIDSTREAM_ERROR_DATA),
        "own/midstream_error_bare": _google(native.GEMINI_MIDSTREAM_ERROR_BARE),
    },
    corpus={"gemini": "google"},
    connect=lambda url: {"api_key": "AIza-test-key-0000", "model": "gemini-test", "base_url": url},
    raws=native_raws,
    server_cuts=None,
    # Inside the payload that carries both calls.
    tool_cut=Expected("own/parallel_calls", thoughts=(("raw", "Let me look."),), marker=b'"get_time"'),
    cut_json=Expected("own/think_text", message="Gemini stream interrupted: the last payload is cut",
                      other_message="malformed Gemini stream: payload is not JSON ("),
    unfinished=Expected("own/think_text", text="The sky ", drop=1),
    wrong_type=Expected(_google(native.gemini_body([native.g_chunk([{"text": "ok"}]),
                                                    native.g_chunk([{"text": 5}], "STOP")])),
                        text="ok", message="part text is not a string"),
    fuzz_provider="google",
    done_always_has=("finish_reason",),  # only a finish reason ends a Gemini stream cleanly
)

OPENAI = Family(
    name="openai",
    own={
        "own/text": _openai("openai", fx.TEXT),
        "own/reasoning": _openai("deepseek", fx.REASONING_CONTENT),
        "own/think": _openai("custom", fx.THINK_TAGS_SPLIT),
        "own/parallel": _openai("openai", fx.PARALLEL_TOOL_CALLS),
        "own/truncated": _openai("zai", fx.TRUNCATED_ARGUMENTS),
        "own/openrouter": _openai("openrouter", fx.OPENROUTER_REASONING_TOOL, comments=fx.OPENROUTER_COMMENTS),
        "own/verbatim": _openai("custom", fx.VERBATIM, tools=True),
    },
    corpus={"openai": "openai", "openrouter": "openrouter", "deepseek": "deepseek", "zai": "zai",
            "groq": "custom"},
    connect=lambda url: {"api_key": "sk-test", "model": "m-test", "base_url": f"{url}/v1",
                         # The replay server is on loopback, which custom endpoints refuse by default.
                         "endpoint_policy": EndpointPolicy(allow_private=True)},
    raws=openai_raws,
    server_cuts=7,
    tool_cut=Expected("own/parallel", marker=b'ris\\"}'),
    # The last event must carry the finish reason: a cut line after it is dropped.
    cut_json=Expected(_openai("zai", fx.TRUNCATED_ARGUMENTS, done=False),
                      message="the stream ended before the provider finished the answer",
                      other_message="malformed stream: event is not JSON ("),
    unfinished=Expected("own/text", text="Hello!", drop=3),
    wrong_type=Expected(_openai("openai", [fx.chunk({"content": "ok"}), fx.chunk({"content": 5})]),
                        text="ok", message="content is not a string"),
    fuzz_provider="openrouter",
    quiet_after_error=True,
)

FAMILIES = [ANTHROPIC, GEMINI, OPENAI]
FAMILY = {family.name: family for family in FAMILIES}
