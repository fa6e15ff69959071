"""The openai SDK client shared by the two OpenAI wire APIs (chat completions and Responses).

The SDK builds and sends the request (auth, base URL, headers) and raises its typed errors
for non-2xx responses; the 200 body is read as raw bytes and decoded by each API's own
normalizer, because the SDK's typed object per event costs ~20x reading the bytes
(bench/normalize.py). What both APIs share lives here: the endpoint and key rules, the
keyless SDK client shared per endpoint, the healed send, and error classification.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai

from providers.client_pool import ClientKey, ClientPool
from providers.endpoint_check import EndpointPolicy
from providers.errors import classify_error_body, classify_failure, error_fields
from providers.healing import Refusal, refusal_of
from providers.http_transport import sdk_http_client
from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities
from providers.model_list import MAX_PAGE_BYTES, ModelPage, decode_page
from providers.openai_compat import model_list
from providers.openai_compat.request import DEFAULT_BASE_URLS
from providers.sdk_adapter import DEFAULT_TIMEOUT, SdkStreamAdapter, read_at_most
from providers.streaming import END_OF_BODY, READ_FAILURE, SSEDecoder, classify_transport_error
from providers.types import ProviderError, RawStreamChunk

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
# The providers whose endpoints speak OpenAI's wire formats (OpenAI itself on Responses).
OPENAI_STYLE = frozenset({Provider.OPENAI, Provider.OPENROUTER, Provider.DEEPSEEK, Provider.ZAI, Provider.CUSTOM})


class OpenAISdkAdapter(SdkStreamAdapter[openai.AsyncOpenAI]):
    """One configured model on one OpenAI-style endpoint; holds no per-stream state."""

    family = "openai_compat"
    repr_fields = ("provider", "model", "base_url")
    option_names = frozenset(
        {"timeout", "connect_timeout", "verbatim_tool_calling", "default_headers", "endpoint_policy", "clients",
         "capabilities"}
    )

    def __init__(
        self,
        provider: Provider | str,
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
        capabilities: ModelCapabilities | None = None,
    ) -> None:
        identity = Provider(provider)
        if identity not in OPENAI_STYLE:
            raise ValueError(f"{identity.value!r} is not an OpenAI-style provider; expected one of "
                             f"{', '.join(p.value for p in OPENAI_STYLE)}")
        configured = base_url
        if base_url is None:
            if identity is Provider.CUSTOM:
                raise ValueError("the custom provider needs a base_url (the server root plus /v1)")
            base_url = DEFAULT_BASE_URLS[identity]
        if not api_key and identity is not Provider.CUSTOM:
            raise ValueError(f"the {identity.value} provider needs an API key; only a custom endpoint may have none")
        super().__init__(identity, model=model, timeout=timeout, clients=clients, capabilities=capabilities,
                         base_url=configured)
        self._auth: dict[str, Any] = {"extra_headers": {
            "Authorization": f"Bearer {api_key}" if api_key else openai.Omit()}}
        self.base_url = base_url
        self.verbatim_tool_calling = bool(verbatim_tool_calling)
        # Only a custom endpoint (typed in Discord) has its connections checked; without a
        # policy it may reach public addresses only.
        self._endpoint_policy = (endpoint_policy or EndpointPolicy()) if identity is Provider.CUSTOM else None
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

    async def _open(self, create: Any, body: dict[str, Any]) -> Any:
        """Open the streamed response of `create` (an SDK `with_streaming_response.create`)
        for `body` (its untyped arguments), healed where a parameter is refused; the
        response manager is returned open, for the caller to close."""

        async def send(arguments: dict[str, Any]) -> Any:
            manager = create(**arguments, **self._auth)
            return manager, await manager.__aenter__()

        return await self._send_healed(send, body)

    async def _model_page(self, cursor: str | None) -> ModelPage:
        """`GET {base}/models` with this route's key, every model at once (no cursor)."""
        async with self._sdk().models.with_streaming_response.list(**self._auth) as response:
            body, cut = await read_at_most(self._body(response.http_response), MAX_PAGE_BYTES)
        return model_list.page_of(decode_page(body, cut), cut)

    async def _relay(self, create: Any, body: dict[str, Any], shared: dict[str, Any]) -> AsyncIterator[RawStreamChunk]:
        """Open `create` for `body` (`_open`), then its body as one RawStreamChunk per SSE
        event, each carrying `shared` (the stream's state, so `process_chunk` stays a
        function of its argument), then END_OF_BODY; a transport failure while reading
        becomes a `(READ_FAILURE, exception)` chunk after what was read. The response is
        closed however the body ends. The adapters' `start_stream` returns this generator
        itself: one generator layer per event, as a hot path wants."""
        manager, response = await self._open(create, body)
        provider = self.provider
        try:
            decoder = SSEDecoder()
            try:
                read = self._paced(self._body(response.http_response))
                while piece := await read():
                    for event in decoder.feed(piece):
                        yield RawStreamChunk(event, provider, shared)
            except Exception as exc:  # noqa: BLE001 - becomes held text + an error chunk
                yield RawStreamChunk((READ_FAILURE, exc), provider, shared)
                return
            for event in decoder.finish():
                yield RawStreamChunk(event, provider, shared)
            yield RawStreamChunk(END_OF_BODY, provider, shared)
        finally:
            await manager.__aexit__(None, None, None)

    def _refusal(self, exc: BaseException) -> Refusal | None:
        if isinstance(exc, openai.APIStatusError):
            return refusal_of(exc.status_code, exc.body)
        return None

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
