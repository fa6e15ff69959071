"""The Anthropic adapter: the SDK sends the request, we read the raw event stream.

Why raw, measured by `bench/normalize_native.py` (20,000 events, client CPU per event):
reading the body with httpx and json.loads costs ~5.3 us, the SDK's typed iteration
(`messages.create(stream=True)`) ~19 us (3.6x the floor), this adapter's whole
normalized path ~6.3 us (1.2x). The SDK still does what it does well: request
building, authentication, base URL, headers and its typed errors for non-2xx
responses (`messages.with_streaming_response.create(..., stream=True)` raises them
before any byte of the body is read). The body is decoded by the shared SSE decoder
and jiter, and the events are normalized by the pure `events.process_event`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

import anthropic

from providers.anthropic_native import model_list
from providers.anthropic_native.errors import classify_exception
from providers.anthropic_native.events import (
    PROVIDER,
    AnthropicStream,
    interrupted,
    malformed,
    process_event,
)
from providers.anthropic_native.request import build_arguments
from providers.client_pool import ClientKey, ClientPool
from providers.healing import Refusal, refusal_of
from providers.http_transport import sdk_http_client
from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities
from providers.model_list import MAX_PAGE_BYTES, ModelPage, decode_page
from providers.safe_transport import RedirectRefused
from providers.sdk_adapter import (
    DEFAULT_TIMEOUT,
    END_OF_BODY,
    SdkStreamAdapter,
    decode_event_data,
    read_at_most,
)
from providers.streaming import SSEDecoder
from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk


class AnthropicRedirectRefused(RedirectRefused, anthropic.AnthropicError):
    """A refused redirect the SDK passes on as is: it calls any foreign error a lost connection."""


class AnthropicAdapter(SdkStreamAdapter[anthropic.AsyncAnthropic]):
    """One configured client; every `start_stream` call makes its own stream state."""

    family = "anthropic"

    def __init__(
        self, provider: Provider | str, *, api_key: str, model: str, base_url: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT, clients: ClientPool | None = None,
        capabilities: ModelCapabilities | None = None,
    ) -> None:
        super().__init__(provider, model=model, timeout=timeout, clients=clients, capabilities=capabilities,
                         base_url=base_url)
        self._client_options: dict[str, Any] = {
            "api_key": api_key, "base_url": base_url, "max_retries": 0, "timeout": timeout,
        }

    def _new_client(self) -> anthropic.AsyncAnthropic:
        """The SDK client (this adapter's key) on an HTTP client that follows no redirect
        (safe_transport), shared per address when the adapter has a client pool. Not shared
        with the key per request as the OpenAI family's is: this SDK's debug log writes a
        request's options, its headers unredacted."""
        http_client = self._http(
            ClientKey(self.family, self._client_options["base_url"]),
            lambda: sdk_http_client(anthropic.DefaultAsyncHttpxClient, transport=self._transport,
                                    error_class=AnthropicRedirectRefused),
        )
        return anthropic.AsyncAnthropic(**self._client_options, http_client=http_client)

    async def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request and yield one RawStreamChunk per SSE event, then an end marker."""
        create = self._sdk().messages.with_streaming_response.create

        async def send(arguments: dict[str, Any]) -> Any:
            opener = create(**arguments, stream=True)
            return opener, await opener.__aenter__()

        opener, response = await self._send_healed(send, build_arguments(request, self.capabilities))
        try:
            read = self._body(response.http_response)
            relay = self.relay_events(read, SSEDecoder(), PROVIDER, AnthropicStream())
            async with aclosing(relay):
                async for chunk in relay:
                    yield chunk
        finally:
            await opener.__aexit__(None, None, None)

    async def _model_page(self, cursor: str | None) -> ModelPage:
        """`GET /v1/models`, the largest page, after `cursor` (the previous page's last id)."""
        after = {"after_id": cursor} if cursor is not None else {}
        listing = self._sdk().models.with_streaming_response.list(limit=model_list.PAGE_SIZE, **after)
        async with listing as response:
            body, cut = await read_at_most(self._body(response.http_response), MAX_PAGE_BYTES)
        return model_list.page_of(decode_page(body, cut), cut)

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Parse the event's JSON and normalize it against the stream's own state."""
        meta = raw.metadata or {}
        state = meta.get("stream")
        if not isinstance(state, AnthropicStream):
            return [malformed("chunk does not belong to an Anthropic stream")]
        if state.finished:  # after message_stop nothing in the body is part of the answer
            return []
        event = meta.get("event")
        if event == END_OF_BODY:
            return process_event(state, event, None)
        payload, failed = decode_event_data(
            raw, interrupted=lambda: interrupted("the last event is cut"),
            malformed=lambda exc: malformed(f"event {event!r} data is not JSON ({exc})"),
        )
        if failed is not None:
            return failed
        return process_event(state, event, payload)

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc)

    def _refusal(self, exc: BaseException) -> Refusal | None:
        if isinstance(exc, anthropic.APIStatusError):
            return refusal_of(exc.status_code, exc.body)
        return None


create = AnthropicAdapter.create
"""Registry entry point (providers.adapter.create_adapter); options: `timeout`, `clients`."""
