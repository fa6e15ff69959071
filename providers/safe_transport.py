"""Provider HTTP clients that follow no redirect and, for custom endpoints, reach only allowed addresses.

Two server-side request forgery holes close here:

- A redirect. The SDKs follow redirects by default, so an endpoint answering
  `307 Location: http://169.254.169.254/...` would make the bot send its request (and
  the API key) there. No provider API redirects a model call, so every 3xx answer
  is refused: `redirect_hook` for httpx2 clients (an event hook, which httpx2 runs
  on each response before it decides to follow), `refuse_redirect_middleware` for
  aiohttp (google-genai's transport).
- A name that resolves differently later (DNS rebinding). The custom provider's
  connections go through `GuardedBackend`: it resolves the host itself, checks every
  address with the rules of `providers.endpoint_check`, and connects to the checked
  address, so no second lookup can swap it. TLS still verifies the certificate
  against the host name (httpcore2 passes the URL's host as server name).

Both refusals are plain exceptions (`RequestRefused`) that the SDKs pass on
unwrapped; the adapters classify them as non-retryable `api_error`s whose message says
what was refused. No request is sent to a refused address.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

from providers.endpoint_check import EndpointPolicy, EndpointRejected


class RequestRefused(Exception):
    """A provider request the bot refuses to make or to continue."""


class RedirectRefused(RequestRefused):
    """The endpoint answered with a redirect; provider requests never follow one."""

    def __init__(self, status: int, location: str | None) -> None:
        super().__init__(
            f"the endpoint answered with a redirect (HTTP {status}{_target(location)}), which is "
            "refused: provider requests never follow redirects"
        )
        self.status = status


class AddressRefused(RequestRefused):
    """A connection of the custom provider would reach an address it may not use."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"connection refused before sending the request: {message}")
        self.reason = reason


def _target(location: str | None) -> str:
    """' to <host>' for the redirect's target: the host only, never its path or query."""
    if not location:
        return ""
    try:
        host = urlsplit(location.strip()).hostname
    except ValueError:
        host = None
    return f" to {host}" if host else " to another path"


def redirect_refusal(
    status: int, location: str | None, error_class: type[RedirectRefused] = RedirectRefused
) -> RedirectRefused | None:
    """The error for a 3xx answer, else None (a model call is never legitimately redirected)."""
    return error_class(status, location) if 300 <= status < 400 else None


Hook = Callable[[httpx2.Response], Awaitable[None]]


def redirect_hook(error_class: type[RedirectRefused] = RedirectRefused) -> Hook:
    """An httpx2 response hook raising `error_class` on a 3xx (httpx2 then closes the response).

    An SDK that wraps foreign exceptions as connection errors (anthropic) gets a subclass
    that is also its own error type, which it passes on unwrapped.
    """

    async def refuse_redirect(response: httpx2.Response) -> None:
        refusal = redirect_refusal(response.status_code, response.headers.get("location"), error_class)
        if refusal is not None:
            raise refusal

    return refuse_redirect


async def refuse_redirect_middleware(request: Any, handler: Any) -> Any:
    """aiohttp client middleware: the same refusal for google-genai's aiohttp transport."""
    response = await handler(request)
    refusal = redirect_refusal(response.status, response.headers.get("Location"))
    if refusal is not None:
        response.close()
        raise refusal
    return response


def no_redirect_options(error_class: type[RedirectRefused] = RedirectRefused) -> dict[str, Any]:
    """httpx2.AsyncClient keyword arguments: never follow a redirect, refuse a 3xx answer."""
    return {
        "follow_redirects": False,
        "event_hooks": {"request": [], "response": [redirect_hook(error_class)]},
    }


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """A network backend that connects only to addresses the policy allows, resolved once.

    httpcore2 calls `connect_tcp` with the URL's host for every new connection; the
    check and the connection use the same resolved address (pinning).
    """

    def __init__(self, policy: EndpointPolicy, inner: httpcore2.AsyncNetworkBackend | None = None) -> None:
        self._policy = policy
        self._inner = inner if inner is not None else httpcore2.AnyIOBackend()

    async def _addresses(self, host: str, port: int) -> list[str]:
        try:
            return [str(a) for a in await self._policy.allowed_addresses(host, port)]
        except EndpointRejected as rejected:
            if rejected.reason == "unresolvable":  # a DNS failure: a plain connection error
                raise httpcore2.ConnectError(str(rejected)) from None
            raise AddressRefused(rejected.reason, str(rejected)) from None

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        """Resolve and check `host`, then connect to its first checked address that answers."""
        failure: Exception | None = None
        for address in await self._addresses(host, port):
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore2.ConnectError(f"no address to connect to for {host}")

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        raise AddressRefused("scheme", "a custom endpoint cannot be a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


DEFAULT_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's own transport, its connection pool connecting through `GuardedBackend`.

    httpx2 offers no argument for a network backend, so the pool it built is replaced
    by one made with httpcore2's public constructor and the same settings plus the
    backend. No proxy: a proxy would connect on our behalf and defeat the address check.
    """

    def __init__(self, policy: EndpointPolicy, *, limits: httpx2.Limits = DEFAULT_LIMITS) -> None:
        super().__init__(limits=limits)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=httpx2.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(policy),
        )

