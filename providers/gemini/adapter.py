"""The Gemini adapter: google-genai sends the request, we read the raw SSE body.

Why not `client.aio.models.generate_content_stream`: per payload it runs json.loads,
json.dumps, json.loads again, a camelCase->snake_case converter and a pydantic
`GenerateContentResponse` build. Measured by `bench/normalize_native.py` (20,000
payloads, client CPU per payload): httpx + json.loads ~6.6 us, the SDK's typed stream
~150 us (23x), its untyped `api_client.async_request_streamed` ~23 us (still a load
and a dump per payload), this adapter's whole normalized path ~8.8 us (1.3x).

The SDK keeps what it does well: `BaseApiClient._build_request` resolves the base
URL, API version, key header, user agent and extra options, and
`BaseApiClient._async_request(stream=True)` sends it with the client's retry options
and raises the SDK's typed `ClientError` / `ServerError` for non-2xx responses. These
are the two calls `generate_content_stream` itself makes (through
`async_request_streamed`), so the wire behaviour is the SDK's; only the per-payload
decoding is ours. They are underscore names of the pinned SDK version: the test
suite drives them through the real SDK on every run. What comes back is the
transport response (aiohttp when installed, else httpx2); its body is read as bytes,
split by our decoder, parsed with jiter and normalized by `events.process_payload`.

The SDK client is made on first use and kept, so consecutive streams of one adapter
reuse the pooled connection; `aclose()` releases it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import jiter
from google import genai
from google.genai import types as genai_types

from providers.gemini.errors import classify_exception
from providers.gemini.events import (
    END_OF_BODY,
    PROVIDER,
    GeminiStream,
    interrupted,
    malformed,
    process_payload,
)
from providers.gemini.request import build_body
from providers.gemini.sse import GeminiSSEDecoder
from providers.streaming import response_timeout, with_inactivity_timeout
from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk

DEFAULT_TIMEOUT = 120.0
# Thinking and thought signatures are v1beta features; the SDK's default is v1.
API_VERSION = "v1beta"


def _byte_pieces(transport: Any) -> AsyncIterator[bytes]:
    content = getattr(transport, "content", None)
    if content is not None and hasattr(content, "iter_any"):  # aiohttp.ClientResponse
        return content.iter_any()
    return transport.aiter_bytes()  # httpx2.Response


async def _close(transport: Any) -> None:
    release = getattr(transport, "release", None)
    if release is not None:  # aiohttp
        release()
        return
    await transport.aclose()


class GeminiAdapter:
    """One configured client; every `start_stream` call makes its own stream state."""

    def __init__(
        self, provider: str, *, api_key: str, model: str, base_url: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT, api_version: str = API_VERSION, **_options: Any,
    ) -> None:
        self.provider = provider
        self.model = model
        self._timeout = timeout
        self._api_key = api_key
        # No HttpOptions.timeout: with aiohttp it is a *total* deadline that would cut
        # long answers; the connect wait and the between-chunk inactivity are bounded here.
        self._http_options = genai_types.HttpOptions(
            base_url=base_url, api_version=api_version,
            retry_options=genai_types.HttpRetryOptions(attempts=1),
        )
        self._client: genai.Client | None = None

    def _sdk(self) -> genai.Client:
        """The SDK client, made on first use and kept: its session reuses the connection."""
        if self._client is None:
            self._client = genai.Client(api_key=self._api_key, http_options=self._http_options)
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections (the adapter can still stream afterwards)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aio.aclose()

    def __repr__(self) -> str:  # never show the key
        return f"GeminiAdapter(model={self.model!r})"

    def _path(self) -> str:
        model = self.model if self.model.startswith(("models/", "tunedModels/")) else f"models/{self.model}"
        return f"{model}:streamGenerateContent?alt=sse"

    async def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request and yield one RawStreamChunk per payload, then an end marker."""
        state = GeminiStream()
        api = self._sdk().aio._api_client
        http_request = api._build_request("post", self._path(), build_body(request), None)
        async with response_timeout(self._timeout):
            response = await api._async_request(http_request=http_request, stream=True)
        transport = response.response_stream
        decoder = GeminiSSEDecoder()
        try:
            async for piece in with_inactivity_timeout(_byte_pieces(transport), self._timeout):
                for _event, data in decoder.feed(piece):
                    yield RawStreamChunk(data, PROVIDER, {"stream": state})
            # A clean end of body (the transport saw no cut) completes a last event that
            # lacks its blank line; if its JSON is cut anyway, process_chunk says so.
            for _event, data in decoder.feed(b"\n\n"):
                yield RawStreamChunk(data, PROVIDER, {"stream": state, "tail": True})
            yield RawStreamChunk(None, PROVIDER, {"stream": state, "event": END_OF_BODY})
        finally:
            await _close(transport)

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Parse the payload's JSON and normalize it against the stream's own state."""
        meta = raw.metadata or {}
        state = meta.get("stream")
        if not isinstance(state, GeminiStream):
            return [malformed("chunk does not belong to a Gemini stream")]
        if meta.get("event") == END_OF_BODY:
            return process_payload(state, None, end=True)
        data = raw.data
        if isinstance(data, (bytes, str)):
            if not data.strip():
                return []
            try:
                data = jiter.from_json(data.encode() if isinstance(data, str) else data)
            except ValueError as exc:
                if meta.get("tail"):
                    return [ProcessedChunk(type="error", error=interrupted("the last payload is cut"))]
                return [malformed(f"payload is not JSON ({exc})")]
        return process_payload(state, data)

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc)

    def create_error_description(self, error: ProviderError, locale: str) -> str:
        from providers.error_description import describe_error

        return describe_error(error, locale)


def create(
    provider: str, *, api_key: str, model: str, base_url: str | None = None, **options: Any
) -> GeminiAdapter:
    """Registry entry point (providers.adapter.create_adapter)."""
    return GeminiAdapter(provider, api_key=api_key, model=model, base_url=base_url, **options)
