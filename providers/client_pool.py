"""HTTP clients shared by every attempt of every turn, one per provider family and address.

Building an SDK's HTTP client costs a fresh TLS context (tens of milliseconds of CPU and
most of a megabyte) and a cold connection pool; an attempt that builds its own pays that
on every question and never reuses a warm connection. The pool keeps one HTTP client
per (adapter family, base URL, endpoint policy). The SDK client on top of it is made
per attempt, with the attempt's key (Anthropic, Gemini), or, for the OpenAI family, shared
too, holding no key: each request carries its attempt's key in its own header. Either
way a key goes with its requests and is never held by a shared part; pool keys hold no
key either.

The pool belongs to whoever runs the event loop (the bot) and is closed once, at
shutdown, after the answers in flight have finished: an adapter never closes a shared
client. The clients are made on first use, inside the running loop (an aiohttp session
must be born on the loop that uses it). `transport` is what the shared clients send
through (providers/http_transport.py): the operator's PROVIDER_HTTP_TRANSPORT; and
`read_interval` how often the adapters read a streamed body at most (PROVIDER_READ_INTERVAL_MS).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from providers.endpoint_check import EndpointPolicy
from providers.healing import RefusalMemory
from providers.http_transport import Transport

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ClientKey:
    """What makes two attempts' HTTP clients interchangeable: never the API key.

    `family` is the adapter family (the SDK, its client class and its redirect error),
    `policy` is the custom endpoint's address policy (None for the hosted providers),
    `options` the client's other settings that are not secret (headers, timeouts), for a
    shared SDK client on top of the HTTP one.
    """

    family: str
    base_url: str | None
    policy: EndpointPolicy | None = None
    options: tuple[tuple[str, str], ...] = ()


class PoolClosed(RuntimeError):
    """The bot is shutting down: no new provider connection is opened."""


class ClientPool:
    """One HTTP client per `ClientKey`, made on first use and closed together by `aclose`."""

    def __init__(self, transport: Transport = "httpx", read_interval: float = 0.0) -> None:
        self._clients: dict[ClientKey, Any] = {}
        self.transport: Transport = transport
        # At most one read of a streamed body per this many seconds (providers.streaming.paced_reader).
        self.read_interval = read_interval
        # What each route's provider refused, healed and remembered (providers.healing).
        self.refusals = RefusalMemory()
        self.closed = False

    def get(self, key: ClientKey, make: Callable[[], T]) -> T:
        """The shared client for `key`, made by `make()` the first time it is asked for."""
        if self.closed:
            raise PoolClosed("the provider client pool is closed (the bot is shutting down)")
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = make()
            log.debug("new shared provider client: %s %s", key.family, key.base_url or "(default address)")
        return client

    def keys(self) -> list[ClientKey]:
        return list(self._clients)

    def shared(self) -> dict[ClientKey, Any]:
        """The clients by key (a copy): what is open now, for tests and diagnostics."""
        return dict(self._clients)

    def __len__(self) -> int:
        return len(self._clients)

    def __repr__(self) -> str:
        return f"ClientPool(clients={len(self._clients)}, transport={self.transport}, closed={self.closed})"

    async def aclose(self) -> None:
        """Close every client (each one's failure is logged, the others still close)."""
        self.closed = True
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await close_client(client)
            except Exception:  # noqa: BLE001 - shutdown goes on; one bad client must not stop it
                log.exception("closing a shared provider client failed")


async def close_client(client: Any) -> None:
    """`aclose()` (httpx2, bundles) or `close()` (aiohttp, sync httpx2), awaited when needed."""
    closer = getattr(client, "aclose", None) or client.close
    result = closer()
    if inspect.isawaitable(result):
        await result
