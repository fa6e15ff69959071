"""Running a real adapter on a body and summarizing the normalized chunks that came out.

Two ways in: `served_outcome` sends a request through the replay server and the real
SDK (what the bot does), `pure_outcome` feeds the body straight to the adapter's pure
half (decoder + `process_chunk`, no HTTP), so the two can be compared. Both summarize
with `summarize`, which also checks every chunk's shape and that a stream ends in
exactly one `done` or `error`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from providers.adapter import create_adapter, normalized_stream
from providers.endpoint_check import EndpointPolicy
from providers.streaming import END_OF_BODY, READ_FAILURE
from providers.types import (
    CHUNK_TYPES,
    ERROR_TYPES,
    ChatRequest,
    FunctionCall,
    Message,
    ProcessedChunk,
    ProviderError,
    RawStreamChunk,
)
from tests.support.data_openai import TOOLS
from tests.support.fake_provider_server import Reply

if TYPE_CHECKING:
    from tests.support.data_provider_families import Family

HELLO = ChatRequest(messages=[Message("user", "hi")])


@dataclass
class StreamOutcome:
    """What one normalized stream produced: shown text, thoughts, calls and how it ended."""

    chunks: list[ProcessedChunk]
    text: str = ""
    thoughts: list[tuple[str, str]] = field(default_factory=list)  # (kind, text), in order
    calls: list[FunctionCall] = field(default_factory=list)
    done: ProcessedChunk | None = None
    error: ProviderError | None = None
    serving: set[str] = field(default_factory=set)  # upstream providers a router named

    @property
    def last(self) -> ProcessedChunk:
        return self.chunks[-1]

    @property
    def raw_thoughts(self) -> str:
        return self.thought_text("raw")

    @property
    def redacted(self) -> int:
        """How many redacted (encrypted, unreadable) thought entries arrived."""
        return sum(1 for kind, _ in self.thoughts if kind == "redacted")

    @property
    def call_summary(self) -> list[tuple[str, dict, bool]]:
        return [(c.name, c.args, c.arguments_truncated) for c in self.calls]

    def thought_text(self, kind: str) -> str:
        return "".join(text for k, text in self.thoughts if k == kind)

    def essentials(self) -> tuple:
        """What must not depend on how the bytes were split in transport."""
        error = None if self.error is None else (self.error.type, self.error.retryable, self.error.code)
        calls = [(c.name, c.args, c.id, c.thought_signature, c.arguments_truncated, c.provider_fields)
                 for c in self.calls]
        done = None if self.done is None else (self.done.finish_reason, self.done.usage)
        return self.text, self.thoughts, calls, done, error, sorted(self.serving)


def summarize(chunks: list[ProcessedChunk]) -> StreamOutcome:
    """Check the chunk-shape invariants and summarize."""
    outcome = StreamOutcome(chunks=chunks)
    for chunk in chunks:
        assert chunk.type in CHUNK_TYPES
        assert outcome.error is None, "nothing may follow an error chunk"
        assert outcome.done is None, "nothing may follow the done chunk"
        for entry in chunk.thoughts or ():
            outcome.thoughts.append((entry.kind, entry.text))
        if chunk.serving_provider is not None:
            outcome.serving.add(chunk.serving_provider)
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


def connection(provider: str, url: str) -> dict[str, Any]:
    """`create_adapter` keywords that point `provider` at a replay server on `url`."""
    if provider == "anthropic":
        return {"api_key": "sk-ant-test-key-0000", "model": "claude-test", "base_url": url}
    if provider == "google":
        return {"api_key": "AIza-test-key-0000", "model": "gemini-test", "base_url": url}
    # The replay server listens on loopback, which a custom endpoint may reach only when allowed.
    return {"api_key": "sk-test", "model": "m-test", "base_url": f"{url}/v1",
            "endpoint_policy": EndpointPolicy(allow_private=True)}


async def error_of(adapter: Any) -> Any:
    """Stream HELLO through `adapter` (closed after) and return the error the stream ended with."""
    try:
        chunks = [c async for c in normalized_stream(adapter, HELLO)]
    finally:
        await adapter.aclose()
    assert chunks[-1].type == "error", chunks
    return chunks[-1].error


async def served_outcome(server, provider: str = "openai", reply: Reply | None = None,
                         request: ChatRequest = HELLO, **options: Any) -> StreamOutcome:
    """One request through the replay server, the real SDK and `normalized_stream`.

    `reply` is queued on the server first when given; `options` go to `create_adapter`
    and override the defaults (`api_key`, `base_url`, a 10 s timeout, ...)."""
    if reply is not None:
        server.reply(reply)
    options.setdefault("timeout", 10)
    adapter = create_adapter(provider, **{**connection(provider, server.url), **options})
    try:
        chunks = [chunk async for chunk in normalized_stream(adapter, request)]
    finally:
        await adapter.aclose()  # type: ignore[attr-defined]
    return summarize(chunks)


async def check_transport_splits(server, provider: str, body: bytes) -> None:
    """Re-splitting the body in transport does not change the outcome."""
    whole = (await served_outcome(server, provider, Reply(body=body))).essentials()
    for seed in (1, 2, 3):
        pieces = Reply(body=body, random_pieces=seed, max_piece=23)
        assert (await served_outcome(server, provider, pieces)).essentials() == whole


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
        return ChatRequest(messages=HELLO.messages, tools=TOOLS if self.tools else ())

    def options(self) -> dict[str, Any]:
        return {"verbatim_tool_calling": True} if self.tools else {}

    def with_body(self, body: bytes) -> Stream:
        return Stream(self.provider, Reply(body=body), self.tools)

    async def served(self, server, **reply_options: Any) -> StreamOutcome:
        """This stream through `served_outcome`, the reply reshaped (cuts, pieces) by `reply_options`."""
        reply = self.reply.with_options(**reply_options)
        return await served_outcome(server, self.provider, reply, self.request(), **self.options())


def pure_outcome(family: Family, stream: Stream, pieces: list[bytes] | None = None) -> StreamOutcome:
    """The adapter's pure half on `pieces` (default: the whole body), as the server path
    would drive it: a raised failure becomes an error chunk, and the first error ends the
    stream, unless the family's half must go quiet after an error by itself (then the
    rest is fed too and `summarize` checks that nothing follows the error)."""
    # Never connects: the URL only satisfies providers that require one.
    adapter = create_adapter(stream.provider, **connection(stream.provider, "http://127.0.0.1:9"),
                             **stream.options())
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
    """What the chat-completions adapter's `start_stream` yields for these transport pieces."""
    from providers.capabilities import capabilities_of
    from providers.openai_compat.normalize import new_stream_state

    capabilities = capabilities_of(stream.provider, connection(stream.provider, "")["model"])
    state = new_stream_state(capabilities, stream.request(), verbatim_tool_calling=stream.tools)
    yield from _sse_raws(stream.provider, {"stream": state}, pieces, END_OF_BODY, READ_FAILURE)


def responses_raws(stream: Stream, pieces: list[bytes]) -> Iterator[RawStreamChunk]:
    """What the Responses adapter's `start_stream` yields for these transport pieces."""
    from providers.openai_responses.events import new_stream

    yield from _sse_raws(stream.provider, {"stream": new_stream(stream.provider)}, pieces, END_OF_BODY, READ_FAILURE)


def _sse_raws(provider: str, shared: dict[str, Any], pieces: list[bytes], end: Any,
              failure: str) -> Iterator[RawStreamChunk]:
    """The OpenAI SDK adapters' relay: each decoded event, a decoder failure as `(failure,
    exc)`, else the events `finish` completes and the `end` marker."""
    from providers.streaming import SSEDecoder

    decoder = SSEDecoder()
    try:
        for piece in pieces:
            for event in decoder.feed(piece):
                yield RawStreamChunk(event, provider, shared)
    except Exception as exc:  # noqa: BLE001 - the adapter relays a failure the same way
        yield RawStreamChunk((failure, exc), provider, shared)
        return
    for event in decoder.finish():
        yield RawStreamChunk(event, provider, shared)
    yield RawStreamChunk(end, provider, shared)
