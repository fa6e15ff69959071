"""The Anthropic adapter: the SDK sends the request, we read the raw event stream.

Why raw, measured by `bench/normalize_native.py` (20,000 events, client CPU per event):
reading the body with httpx and json.loads costs ~5.3 us, the SDK's typed iteration
(`messages.create(stream=True)`) ~19 us (3.6x the floor), this adapter's whole
normalized path ~6.3 us (1.2x). The SDK still does what it does well: request
building, authentication, base URL, headers and its typed errors for non-2xx
responses (`messages.with_streaming_response.create(..., stream=True)` raises them
before any byte of the body is read). The body is decoded by the shared SSE decoder
and jiter, and the events are normalized by the pure `events.process_event`.

The SDK client is made on first use and kept, so consecutive streams of one adapter
reuse the pooled connection; `aclose()` releases it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic
import jiter

from providers.anthropic_native.errors import classify_exception
from providers.anthropic_native.events import (
    END_OF_BODY,
    PROVIDER,
    AnthropicStream,
    interrupted,
    malformed,
    process_event,
)
from providers.anthropic_native.request import build_arguments
from providers.streaming import SSEDecoder, response_timeout, with_inactivity_timeout
from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk

DEFAULT_TIMEOUT = 120.0


class AnthropicAdapter:
    """One configured client; every `start_stream` call makes its own stream state."""

    def __init__(
        self, provider: str, *, api_key: str, model: str, base_url: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT, **_options: Any,
    ) -> None:
        self.provider = provider
        self.model = model
        self._timeout = timeout
        self._client_options: dict[str, Any] = {
            "api_key": api_key, "base_url": base_url, "max_retries": 0, "timeout": timeout,
        }
        self._client: anthropic.AsyncAnthropic | None = None

    def _sdk(self) -> anthropic.AsyncAnthropic:
        """The SDK client, made on first use and kept: its pool reuses the connection."""
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(**self._client_options)
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections (the adapter can still stream afterwards)."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicAdapter(model={self.model!r})"

    async def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request and yield one RawStreamChunk per SSE event, then an end marker."""
        state = AnthropicStream()
        arguments = build_arguments(request, self.model)
        decoder = SSEDecoder()
        opener = self._sdk().messages.with_streaming_response.create(**arguments, stream=True)
        async with response_timeout(self._timeout):
            response = await opener.__aenter__()
        try:
            pieces = with_inactivity_timeout(response.http_response.aiter_bytes(), self._timeout)
            async for piece in pieces:
                for event, data in decoder.feed(piece):
                    yield RawStreamChunk(data, PROVIDER, {"event": event, "stream": state})
            # A clean end of body (the transport saw no cut) completes a last event that
            # lacks its blank line; if its JSON is cut anyway, process_chunk says so.
            for event, data in decoder.feed(b"\n\n"):
                yield RawStreamChunk(data, PROVIDER, {"event": event, "stream": state, "tail": True})
            yield RawStreamChunk(None, PROVIDER, {"event": END_OF_BODY, "stream": state})
        finally:
            await opener.__aexit__(None, None, None)

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Parse the event's JSON and normalize it against the stream's own state."""
        meta = raw.metadata or {}
        state = meta.get("stream")
        if not isinstance(state, AnthropicStream):
            return [malformed("chunk does not belong to an Anthropic stream")]
        event = meta.get("event")
        if event == END_OF_BODY:
            return process_event(state, event, None)
        data = raw.data
        if isinstance(data, (bytes, str)):
            if not data.strip():
                return []
            try:
                data = jiter.from_json(data.encode() if isinstance(data, str) else data)
            except ValueError as exc:
                if meta.get("tail"):
                    return [ProcessedChunk(type="error", error=interrupted("the last event is cut"))]
                return [malformed(f"event {event!r} data is not JSON ({exc})")]
        return process_event(state, event, data)

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc)

    def create_error_description(self, error: ProviderError, locale: str) -> str:
        from providers.error_description import describe_error

        return describe_error(error, locale)


def create(
    provider: str, *, api_key: str, model: str, base_url: str | None = None, **options: Any
) -> AnthropicAdapter:
    """Registry entry point (providers.adapter.create_adapter)."""
    return AnthropicAdapter(provider, api_key=api_key, model=model, base_url=base_url, **options)
