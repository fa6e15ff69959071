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
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from providers.client_pool import ClientKey, ClientPool
from providers.gemini import model_list
from providers.gemini.errors import classify_exception
from providers.gemini.events import (
    PROVIDER,
    GeminiStream,
    interrupted,
    malformed,
    process_payload,
)
from providers.gemini.request import build_body
from providers.gemini.sse import GeminiSSEDecoder
from providers.healing import Refusal, refusal_of
from providers.http_transport import Transport, sdk_http_client
from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities
from providers.model_list import MAX_PAGE_BYTES, ModelPage, decode_page
from providers.safe_transport import no_redirect_options, refuse_redirect_middleware
from providers.sdk_adapter import (
    DEFAULT_TIMEOUT,
    END_OF_BODY,
    SdkStreamAdapter,
    decode_event_data,
    read_at_most,
)
from providers.streaming import PieceReader
from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk

# Thinking and thought signatures are v1beta features; the SDK's default is v1.
API_VERSION = "v1beta"




async def _close(transport: Any) -> None:
    release = getattr(transport, "release", None)
    if release is not None:  # aiohttp
        release()
        return
    await transport.aclose()


# No redirect is followed, on either transport google-genai may use: the SDK hands the
# aiohttp-only keys to each aiohttp request and the httpx2-only keys to its httpx2 client.
_NO_REDIRECTS: dict[str, Any] = {
    "allow_redirects": False, "middlewares": (refuse_redirect_middleware,), **no_redirect_options(),
}


@dataclass(frozen=True, slots=True)
class SharedGeminiTransport:
    """What a google-genai Client would otherwise build for itself, shared per address.

    Given both httpx2 clients and an SSL context, `genai.Client` makes no client and no
    TLS context of its own (it always builds a sync client, and a context for its live
    API, unless handed them), and it never closes clients it was handed. The SDK then
    sends through the async httpx2 client, which refuses redirects (safe_transport).
    """

    async_client: httpx2.AsyncClient
    sync_client: httpx2.Client
    ssl_context: ssl.SSLContext

    @classmethod
    def new(cls, transport: Transport = "httpx") -> SharedGeminiTransport:
        context = httpx2.create_ssl_context()
        return cls(sdk_http_client(httpx2.AsyncClient, transport=transport),
                   httpx2.Client(verify=context, follow_redirects=False), context)

    async def aclose(self) -> None:
        await self.async_client.aclose()
        self.sync_client.close()


class GeminiAdapter(SdkStreamAdapter[genai.Client]):
    """One configured client; every `start_stream` call makes its own stream state."""

    family = "gemini"
    option_names = frozenset({"timeout", "api_version", "clients", "capabilities"})

    def __init__(
        self, provider: Provider | str, *, api_key: str, model: str, base_url: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT, api_version: str = API_VERSION,
        clients: ClientPool | None = None, capabilities: ModelCapabilities | None = None,
    ) -> None:
        super().__init__(provider, model=model, timeout=timeout, clients=clients, capabilities=capabilities,
                         base_url=base_url)
        self._api_key = api_key
        self._base_url = base_url
        # No HttpOptions.timeout: with aiohttp it is a *total* deadline that would cut
        # long answers; the connect wait and the between-chunk inactivity are bounded here.
        self._http_options = genai_types.HttpOptions(
            base_url=base_url, api_version=api_version,
            retry_options=genai_types.HttpRetryOptions(attempts=1),
            async_client_args=_NO_REDIRECTS,
        )

    def _new_client(self) -> genai.Client:
        """The SDK client with this adapter's key; on the pool's shared transport if pooled."""
        if self._clients is None:
            return genai.Client(api_key=self._api_key, http_options=self._http_options)
        shared = self._http(ClientKey(self.family, self._base_url),
                            lambda: SharedGeminiTransport.new(self._transport))
        options = self._http_options.model_copy(update={
            "httpx_client": shared.sync_client, "httpx_async_client": shared.async_client,
            "async_client_args": {"ssl": shared.ssl_context},
        })
        return genai.Client(api_key=self._api_key, http_options=options)

    async def _close_client(self, client: genai.Client) -> None:
        await client.aio.aclose()

    def _path(self) -> str:
        model = self.model if self.model.startswith(("models/", "tunedModels/")) else f"models/{self.model}"
        return f"{model}:streamGenerateContent?alt=sse"

    async def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request and yield one RawStreamChunk per payload, then an end marker."""
        api = self._sdk().aio._api_client
        path = self._path()

        async def send(body: dict[str, Any]) -> Any:
            http_request = api._build_request("post", path, body, None)
            return await api._async_request(http_request=http_request, stream=True)

        response = await self._send_healed(send, build_body(request, self.capabilities))
        transport = response.response_stream
        try:
            relay = self.relay_events(self._reader(transport), GeminiSSEDecoder(), PROVIDER, GeminiStream())
            async with aclosing(relay):
                async for chunk in relay:
                    yield chunk
        finally:
            await _close(transport)

    def _reader(self, transport: Any) -> PieceReader:
        """The body's reader on either transport the SDK answers with. httpx2 first: reading
        a streamed httpx2.Response's `content` raises before `read()`."""
        return self._body(transport) if hasattr(transport, "aiter_bytes") else transport.content.readany

    async def _model_page(self, cursor: str | None) -> ModelPage:
        """`models.list` (`GET /v1beta/models`), the largest page, from `cursor` (a page token),
        sent as `generate_content_stream` sends: the SDK builds and sends the request."""
        api = self._sdk().aio._api_client
        query = {"pageSize": model_list.PAGE_SIZE, **({"pageToken": cursor} if cursor is not None else {})}
        http_request = api._build_request("get", f"models?{urlencode(query)}", {}, None)
        transport = (await api._async_request(http_request=http_request, stream=True)).response_stream
        try:
            body, cut = await read_at_most(self._reader(transport), MAX_PAGE_BYTES)
        finally:
            await _close(transport)
        return model_list.page_of(decode_page(body, cut), cut)

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Parse the payload's JSON and normalize it against the stream's own state."""
        meta = raw.metadata or {}
        state = meta.get("stream")
        if not isinstance(state, GeminiStream):
            return [malformed("chunk does not belong to a Gemini stream")]
        if meta.get("event") == END_OF_BODY:
            return process_payload(state, None, end=True)
        payload, failed = decode_event_data(
            raw, interrupted=lambda: interrupted("the last payload is cut"),
            malformed=lambda exc: malformed(f"payload is not JSON ({exc})"),
        )
        if failed is not None:
            return failed
        return process_payload(state, payload)

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc)

    def _refusal(self, exc: BaseException) -> Refusal | None:
        if isinstance(exc, genai_errors.APIError):
            return refusal_of(exc.code, exc.details)
        return None


create = GeminiAdapter.create
"""Registry entry point (providers.adapter.create_adapter); options: `timeout`, `api_version`, `clients`."""
