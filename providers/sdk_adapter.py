"""What the SDK-backed adapters share: the kept SDK client, and reading a raw event body.

Every adapter lets its provider's official SDK build and send the request and reads the
2xx body itself (the benchmarks in bench/ say why). The lifecycle around that SDK
client is the same for all of them and lives in `SdkStreamAdapter`; the native adapters
(Anthropic, Gemini) also share how a body becomes chunks (`relay_events`) and how an
event's JSON is decoded (`decode_event_data`). What really differs (the request, the
byte source, the event normalization) stays in each adapter.

Each adapter also lists its provider's models (`list_models`, `providers/model_list.py`)
through the same SDK client an answer uses; only how one page is asked for and read is
the family's (`_model_page`).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar, Generic, Self, TypeVar

import httpx2
import jiter

from providers import http_transport as http_transport_module
from providers.capabilities import capabilities_of
from providers.client_pool import ClientKey, ClientPool
from providers.healing import MAX_HEALS, Refusal, RefusalMemory, Route, heal
from providers.http_transport import Transport, body_reader
from providers.identity import Provider, provider_of
from providers.model_capabilities import ModelCapabilities
from providers.model_list import (
    LIST_SECONDS,
    MAX_LISTED,
    MAX_PAGES,
    ListedModel,
    ModelListFailed,
    ModelPage,
)
from providers.streaming import PieceReader, SSEDecoder, paced_reader, response_timeout
from providers.types import ProcessedChunk, ProviderError, RawStreamChunk

DEFAULT_TIMEOUT = 120.0
END_OF_BODY = "__end_of_body__"
"""`metadata["event"]` of the last RawStreamChunk of a native stream: the body ended cleanly."""

ClientT = TypeVar("ClientT")
HttpT = TypeVar("HttpT")
OpenedT = TypeVar("OpenedT")


class SdkStreamAdapter(ABC, Generic[ClientT]):
    """One configured model: provider, model, timeout and an SDK client made once and kept.

    The client is made on first use and kept, so consecutive streams of one adapter
    reuse its pooled connection; `aclose()` releases it. With a `ClientPool` (`clients`)
    the SDK client is built on the pool's shared HTTP client instead, and `aclose()`
    leaves that client open for the next attempt. Subclasses keep the key only in
    private attributes that `repr_fields` never names.
    """

    # The `ClientKey` family: which SDK and HTTP client class the shared client is for.
    family: ClassVar[str] = ""

    # Attributes the repr shows; never anything that holds a key.
    repr_fields: ClassVar[tuple[str, ...]] = ("model",)
    # Keyword options `create` passes on to the constructor; it drops all others.
    option_names: ClassVar[frozenset[str]] = frozenset({"timeout", "clients", "capabilities"})

    @classmethod
    def create(
        cls, provider: str, *, api_key: str, model: str, base_url: str | None = None, **options: Any
    ) -> Self:
        """Registry entry point (providers.adapter.create_adapter).

        Options this adapter does not take are ignored, so one option set can be passed
        to any provider.
        """
        taken = {name: value for name, value in options.items() if name in cls.option_names}
        return cls(provider, api_key=api_key, model=model, base_url=base_url, **taken)

    def __init__(self, provider: Provider | str, *, model: str, timeout: float | None,
                 clients: ClientPool | None = None, capabilities: ModelCapabilities | None = None,
                 base_url: str | None = None) -> None:
        self.provider = provider_of(provider)
        self.model = model
        # Whose refusals this adapter's requests heal and learn from (providers.healing):
        # the provider, the address as configured (None: the provider's own) and the model.
        self.route: Route = (self.provider.value, base_url, model)
        self._refusals = clients.refusals if clients is not None else RefusalMemory()
        # What the model takes, asked once: every request this adapter builds reads it.
        # `create_adapter` hands them over, asked with the route's hints; a directly built
        # adapter asks for the name's own.
        self.capabilities = capabilities or capabilities_of(self.provider, model)
        self.timeout = timeout
        self._client: ClientT | None = None
        self._clients = clients
        # What the HTTP client sends through: the pool's (PROVIDER_HTTP_TRANSPORT), else the default.
        self._transport: Transport = (
            clients.transport if clients is not None else http_transport_module.DEFAULT_TRANSPORT)

    @property
    def _read_interval(self) -> float:
        """Seconds between two reads of a body at least: the pool's (0: read as it arrives)."""
        return self._clients.read_interval if self._clients is not None else 0.0

    def _paced(self, read: PieceReader) -> PieceReader:
        """The body's reads bounded by `timeout` and spaced by the pool's read interval."""
        return paced_reader(read, self.timeout, self._read_interval)

    def _body(self, response: httpx2.Response) -> PieceReader:
        """The body's reader (not yet paced); with a read interval its socket is left
        unread between two reads (`body_reader(held=True)`)."""
        return body_reader(response, held=self._read_interval > 0)

    def _http(self, key: ClientKey, make: Callable[[], HttpT]) -> HttpT:
        """The HTTP client the SDK client sends through: the pool's shared one, or `make()`."""
        if self._clients is None:
            return make()
        return self._clients.get(key, make)

    async def _send_healed(self, send: Callable[[dict[str, Any]], Awaitable[OpenedT]],
                           body: dict[str, Any]) -> OpenedT:
        """`send(body)` within the response timeout, healed where the provider refuses one
        parameter (`providers.healing`): what the route is known to refuse is left out up
        front; a new refusal sends the same request again at once without it, at most
        MAX_HEALS times, and is remembered. Any other failure is raised as it came."""
        body = self._refusals.applied(self.route, body)
        heals = 0
        while True:
            try:
                async with response_timeout(self.timeout):
                    return await send(body)
            except Exception as exc:
                refusal = self._refusal(exc) if heals < MAX_HEALS else None
                healed = heal(body, refusal) if refusal is not None else None
                if healed is None:
                    raise
                self._refusals.remember(self.route, refusal)
                body, heals = healed, heals + 1

    def _refusal(self, exc: BaseException) -> Refusal | None:
        """The parameter `exc` (the SDK's error for a refused request) names; None here, where
        the family reads no error bodies."""
        return None

    async def list_models(self) -> tuple[ListedModel, ...]:
        """The provider's models, page after page within the bounds of
        `providers.model_list`; any failure raises ModelListFailed with its classified error."""
        try:
            async with asyncio.timeout(LIST_SECONDS):
                return await self._listed()
        except Exception as exc:  # noqa: BLE001 - every failure is classified as an answer's is
            raise ModelListFailed(self.handle_provider_error(exc)) from None  # type: ignore[attr-defined]

    async def _listed(self) -> tuple[ListedModel, ...]:
        listed: dict[str, ListedModel] = {}
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._model_page(cursor)
            for model in page.models:
                listed.setdefault(model.id, model)
            cursor = page.next
            if cursor is None or len(listed) >= MAX_LISTED:
                break
        return tuple(listed.values())[:MAX_LISTED]

    @abstractmethod
    async def _model_page(self, cursor: str | None) -> ModelPage:
        """One page of the provider's list (`cursor`: where the previous page said the next
        one starts; None for the first), read with `read_at_most`."""

    @abstractmethod
    def _new_client(self) -> ClientT:
        """Build the SDK client (called once per open/close cycle)."""

    async def _close_client(self, client: ClientT) -> None:
        """Release the client's connections; the SDKs of OpenAI and Anthropic call it close()."""
        await client.close()  # type: ignore[attr-defined]

    def _sdk(self) -> ClientT:
        """The SDK client, made on first use and kept so its pool reuses connections."""
        if self._client is None:
            self._client = self._new_client()
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections (the adapter can still stream afterwards).

        A shared HTTP client is the pool's: only the SDK client on top of it is dropped.
        """
        client, self._client = self._client, None
        if client is not None and self._clients is None:
            await self._close_client(client)

    def __repr__(self) -> str:  # never shows the key
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.repr_fields)
        return f"{type(self).__name__}({fields})"

    async def relay_events(
        self, read: PieceReader, decoder: SSEDecoder, provider: str, state: Any
    ) -> AsyncIterator[RawStreamChunk]:
        """Yield one RawStreamChunk per SSE event of the body, then the END_OF_BODY marker.

        Every chunk's metadata holds the event name and this stream's `state`, so
        `process_chunk` stays a function of its argument. A clean end of body (the
        transport saw no cut) completes a last event that lacks its blank line; it is
        marked `tail`, so a cut JSON there reads as an interruption (`decode_event_data`).
        """
        read = self._paced(read)
        while piece := await read():
            for event, data in decoder.feed(piece):
                yield RawStreamChunk(data, provider, {"event": event, "stream": state})
        for event, data in decoder.feed(b"\n\n"):
            yield RawStreamChunk(data, provider, {"event": event, "stream": state, "tail": True})
        yield RawStreamChunk(None, provider, {"event": END_OF_BODY, "stream": state})


async def read_at_most(read: PieceReader, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a body, and whether it was cut there (the rest is never read)."""
    body = bytearray()
    while piece := await read():
        body += piece
        if len(body) > limit:
            return bytes(body[:limit]), True
    return bytes(body), False


def decode_event_data(
    raw: RawStreamChunk,
    *,
    interrupted: Callable[[], ProviderError],
    malformed: Callable[[ValueError], ProcessedChunk],
) -> tuple[Any, list[ProcessedChunk] | None]:
    """`(payload, None)` with the event's JSON decoded by jiter, or `(None, chunks)` to return.

    Blank data yields no chunks. Unparsable data is a malformed stream, except in the
    `tail` event after a clean end of body (`relay_events`): there it was cut, so the
    stream was interrupted (retryable). Data that is not bytes or text is already decoded.
    """
    data = raw.data
    if not isinstance(data, (bytes, str)):
        return data, None
    if not data.strip():
        return None, []
    try:
        return jiter.from_json(data.encode() if isinstance(data, str) else data), None
    except ValueError as exc:
        if (raw.metadata or {}).get("tail"):
            return None, [ProcessedChunk(type="error", error=interrupted())]
        return None, [malformed(exc)]
