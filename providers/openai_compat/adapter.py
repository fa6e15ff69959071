"""The OpenAI wire family adapter: openai, openrouter, deepseek, zai and custom endpoints.

The openai SDK builds and sends the request (auth, base URL, headers) and raises its
typed errors for non-2xx responses; the 200 body is read as raw bytes and decoded here,
because the SDK's typed object per chunk costs ~20x reading the bytes (bench/normalize.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai

from providers.client_pool import ClientKey, ClientPool
from providers.endpoint_check import EndpointPolicy
from providers.errors import classify_error_body, classify_failure, error_fields
from providers.http_transport import sdk_http_client
from providers.openai_compat.normalize import (
    END_OF_BODY,
    FAILURE,
    fail,
    new_stream_state,
    process_event,
)
from providers.openai_compat.request import (
    DEFAULT_BASE_URLS,
    FAMILY,
    build_request,
    searches_here,
    untyped_arguments,
)
from providers.sdk_adapter import DEFAULT_TIMEOUT, SdkStreamAdapter
from providers.streaming import (
    SSEDecoder,
    classify_transport_error,
    response_timeout,
)
from providers.types import ChatRequest, ProcessedChunk, ProviderError, RawStreamChunk

DEFAULT_CONNECT_TIMEOUT = 10.0
# The SDK client holds no key: it is shared by every attempt on one endpoint (a new one per
# attempt costs a thread hop on its first request, to read the platform for its headers,
# and its lazy resources: about 7% of the bot's CPU with hundreds of answers starting).
# Each request carries its attempt's key as its own `Authorization` header
# (`extra_headers`, which the SDK keeps over the client's and redacts from its debug log),
# or an `Omit()` for a keyless custom endpoint (a local server: "explicitly no
# authentication"). The SDK refuses a client without a key, so the client gets this one,
# which no request sends.
UNSENT_PLACEHOLDER = "unsent"
SDK_FAMILY = "openai_compat.sdk"  # the shared SDK client's ClientKey family (the HTTP one's is `family`)


class OpenAICompatAdapter(SdkStreamAdapter[openai.AsyncOpenAI]):
    """One configured model on one endpoint; holds no per-stream state."""

    family = "openai_compat"
    repr_fields = ("provider", "model", "base_url")
    option_names = frozenset(
        {"timeout", "connect_timeout", "verbatim_tool_calling", "default_headers", "endpoint_policy", "clients"}
    )

    def __init__(
        self,
        provider: str,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        verbatim_tool_calling: bool = False,
        default_headers: dict[str, str] | None = None,
        endpoint_policy: EndpointPolicy | None = None,
        clients: ClientPool | None = None,
    ) -> None:
        if provider not in FAMILY:
            raise ValueError(f"{provider!r} is not an OpenAI-compatible provider; expected one of {FAMILY}")
        if base_url is None:
            if provider == "custom":
                raise ValueError("the custom provider needs a base_url (the server root plus /v1)")
            base_url = DEFAULT_BASE_URLS[provider]
        if not api_key and provider != "custom":
            raise ValueError(f"the {provider} provider needs an API key; only a custom endpoint may have none")
        super().__init__(provider, model=model, timeout=timeout, clients=clients)
        self._auth: dict[str, Any] = {"extra_headers": {
            "Authorization": f"Bearer {api_key}" if api_key else openai.Omit()}}
        self.base_url = base_url
        self.verbatim_tool_calling = bool(verbatim_tool_calling)
        # Only a custom endpoint (typed in Discord) has its connections checked; without a
        # policy it may reach public addresses only.
        self._endpoint_policy = (endpoint_policy or EndpointPolicy()) if provider == "custom" else None
        # The operator's word that custom endpoints take `reasoning_effort` (reasoning.py).
        self._custom_effort = self._endpoint_policy is not None and self._endpoint_policy.reasoning_effort
        self._client_options: dict[str, Any] = {
            "api_key": UNSENT_PLACEHOLDER,
            "base_url": base_url,
            "max_retries": 0,
            # Reads are bounded by our own inactivity timeout, which knows about streams.
            "timeout": httpx2.Timeout(None, connect=connect_timeout),
            "default_headers": default_headers,
        }

    def _new_client(self) -> openai.AsyncOpenAI:
        """The SDK client (no key: each request carries its own) on an HTTP client that
        follows no redirect and, for a custom endpoint, checks every connection's address
        (safe_transport); both shared per endpoint when the adapter has a client pool."""
        policy = self._endpoint_policy

        def make() -> openai.AsyncOpenAI:
            http_client = self._http(
                ClientKey(self.family, self.base_url, policy),
                lambda: sdk_http_client(openai.DefaultAsyncHttpxClient, transport=self._transport, policy=policy),
            )
            return openai.AsyncOpenAI(**self._client_options, http_client=http_client)

        if self._clients is None:
            return make()
        return self._clients.get(ClientKey(SDK_FAMILY, self.base_url, policy, self._shared_options()), make)

    def _shared_options(self) -> tuple[tuple[str, str], ...]:
        """The client settings two attempts must agree on to share one SDK client."""
        headers = self._client_options["default_headers"] or {}
        return (("connect_timeout", repr(self._client_options["timeout"].connect)),
                *sorted((f"header:{name}", value) for name, value in headers.items()))

    async def start_stream(self, request: ChatRequest) -> AsyncIterator[RawStreamChunk]:
        """Send the request; yield one RawStreamChunk per SSE event, then an end marker.

        Every chunk carries the same `metadata` dict holding this stream's state, so
        `process_chunk` stays a function of its argument.
        """
        state = new_stream_state(self.provider, request, verbatim_tool_calling=self.verbatim_tool_calling,
                                 web_search=searches_here(self.provider, self.model, request))
        shared = {"stream": state}
        provider = self.provider
        arguments = build_request(self.provider, self.model, request, custom_reasoning_effort=self._custom_effort)
        manager = self._sdk().chat.completions.with_streaming_response.create(
            **untyped_arguments(arguments), **self._auth
        )
        async with response_timeout(self.timeout):
            response = await manager.__aenter__()
        try:
            decoder = SSEDecoder()
            try:
                read = self._paced(self._body(response.http_response))
                while piece := await read():
                    for event in decoder.feed(piece):
                        yield RawStreamChunk(event, provider, shared)
            except Exception as exc:  # noqa: BLE001 - becomes held text + an error chunk
                yield RawStreamChunk((FAILURE, exc), provider, shared)
                return
            for event in decoder.finish():
                yield RawStreamChunk(event, provider, shared)
            yield RawStreamChunk(END_OF_BODY, provider, shared)
        finally:
            await manager.__aexit__(None, None, None)

    def process_chunk(self, raw: RawStreamChunk) -> Sequence[ProcessedChunk]:
        """Synchronous; all state it touches is the stream's own (`raw.metadata["stream"]`)."""
        state = (raw.metadata or {}).get("stream")
        if state is None:
            raise ValueError("process_chunk needs a RawStreamChunk made by this adapter's start_stream")
        if raw.data[0] == FAILURE:
            return fail(state, self.handle_provider_error(raw.data[1]))
        return process_event(state, raw.data)

    def handle_provider_error(self, exc: BaseException) -> ProviderError:
        """SDK status errors, SDK connection errors, transport failures, our stream errors."""
        provider = self.provider
        if isinstance(exc, openai.APIStatusError):
            message, code, error_type, details = error_fields(exc.body)
            return classify_failure(
                provider=provider, message=message or str(exc), status=exc.status_code,
                code=code if code is not None else getattr(exc, "code", None),
                error_type=error_type or getattr(exc, "type", None),
                original_error=exc, details=details,
            )
        if isinstance(exc, openai.APITimeoutError):
            return classify_failure(provider=provider, message=str(exc), timeout=True, original_error=exc)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            if cause is not None:
                err = classify_transport_error(provider, cause, wrapper=exc)
                if err is not None:
                    return err
            return classify_failure(provider=provider, message=str(exc), connection_failed=True,
                                    original_error=exc)
        if isinstance(exc, openai.APIError):
            body = exc.body if exc.body is not None else {"message": exc.message}
            return classify_error_body(provider=provider, body=body, original_error=exc)
        err = classify_transport_error(provider, exc)
        if err is not None:
            return err
        return classify_failure(provider=provider, message=f"{type(exc).__name__}: {exc}", original_error=exc)


create = OpenAICompatAdapter.create
"""Registry entry point (providers.adapter.create_adapter).

Options: `timeout` (seconds, inactivity and first response; default 120, None for no
bound), `connect_timeout`, `verbatim_tool_calling` (custom only), `default_headers`,
`endpoint_policy` (custom only: an `EndpointPolicy`, e.g. `EndpointPolicy(allow_private=True)`
for ALLOW_PRIVATE_ENDPOINTS; by default only public addresses are reached and no
`reasoning_effort` is sent), `clients` (a `ClientPool` whose shared HTTP client the SDK
client uses, sending through the pool's transport: aiohttp or httpx2, providers/http_transport.py).
Others are ignored so one option set can be passed to any provider.
"""
