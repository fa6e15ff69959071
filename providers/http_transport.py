"""The HTTP transport under the SDKs' clients: httpx2's own, or aiohttp, with the same protections.

Why a choice: reading a trickled stream (one small SSE event per network read, as real
providers send) through httpx2/httpcore2/anyio costs more CPU per event than our whole
normalization; aiohttp's reader costs less (bench/read_path.py and bench/load.py
measure both, on asyncio and uvloop). Every family keeps one client type, an
`httpx2.AsyncClient` (what the openai, anthropic and google-genai SDKs take as their
`http_client`), and only what sends its requests changes: `AiohttpTransport` here, our
own small httpx2 transport on one aiohttp session (the SDKs ship one too, but each
SDK's copy imports that whole SDK, and one maps a lost connection to a timeout).

The aiohttp transport keeps what `safe_transport` guarantees for httpx2:
- no redirect: aiohttp is told not to follow one, and the httpx2 client above it runs
  the same refusing response hook (`no_redirect_options`);
- for a custom endpoint, every connection's address checked and pinned by
  `GuardedConnector` (which the link reader and the search client use too). No proxy,
  no environment proxy settings (`trust_env=False`), no Unix socket.
Its failures reach the SDKs as the httpx2 errors they classify (`_mapped`).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal

import aiohttp
import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult

from providers.endpoint_check import EndpointPolicy, EndpointRejected
from providers.safe_transport import (
    AddressRefused,
    GuardedTransport,
    RedirectRefused,
    no_redirect_options,
)
from providers.streaming import PieceReader, reader_of

if TYPE_CHECKING:  # aiohttp's own dependency; only its type is named here
    from aiohappyeyeballs import AddrInfoType

Transport = Literal["aiohttp", "httpx"]
TRANSPORTS: tuple[Transport, ...] = ("aiohttp", "httpx")
# For an adapter given neither `http_transport` nor a pool (benches, tests): httpx2's own.
DEFAULT_TRANSPORT: Transport = "httpx"

# The response extensions holding the body's PieceReader (set by AiohttpTransport): one
# that reads the socket all along, one that leaves it unread between two reads.
PIECE_READER = "bot.piece_reader"
HELD_PIECE_READER = "bot.held_piece_reader"

_CONNECTION_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)


def _refused(rejected: EndpointRejected) -> Exception:
    """A DNS failure stays a connection error (retryable); any other refusal is final."""
    if rejected.reason == "unresolvable":
        return socket.gaierror(socket.EAI_NONAME, str(rejected))
    return AddressRefused(rejected.reason, str(rejected))


class GuardedResolver(AbstractResolver):
    """aiohttp resolver answering only with addresses the policy allows (else it refuses)."""

    def __init__(self, policy: EndpointPolicy) -> None:
        self._policy = policy

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        try:
            addresses = await self._policy.allowed_addresses(host, port)
        except EndpointRejected as rejected:
            raise _refused(rejected) from None
        return [ResolveResult(hostname=host, host=str(address), port=port,
                              family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST)
                for address in addresses]

    async def close(self) -> None:
        return None


class _RefusedSocket(OSError):
    """`GuardedConnector`'s refusal of one address. aiohttp passes on only OSErrors from
    opening a socket (wrapped in ClientConnectorError); `connection_refusal` unwraps it."""

    def __init__(self, refused: AddressRefused) -> None:
        super().__init__(errno.EACCES, str(refused))
        self.refused = refused


class GuardedConnector(aiohttp.TCPConnector):
    """An aiohttp connector that reaches only the addresses `policy` allows, checked when
    each connection is made.

    Two checks, both at connection time. A name goes to `GuardedResolver`, which refuses
    the host when any of its addresses is refused (the client may pick any of them);
    without a DNS cache each new connection resolves and is checked again (DNS
    rebinding), and the connector connects to exactly the addresses checked. A literal
    address never reaches a resolver (aiohttp connects to it directly, and yarl has
    already turned `１２７。0。0。1` and other compatibility forms into `127.0.0.1`), so
    the socket factory checks the very address each socket is opened for, literal or
    resolved: nothing connects that the policy refuses, whatever checked the URL before.
    """

    def __init__(self, policy: EndpointPolicy, **options: Any) -> None:
        def guarded_socket(addr_info: AddrInfoType) -> socket.socket:
            family, kind, proto, _name, sockaddr = addr_info
            address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            refusal = policy.refusal(address)
            if refusal is not None:
                raise _RefusedSocket(AddressRefused(
                    refusal.reason, f"{address}:{sockaddr[1]} cannot be used: {refusal.text}."))
            return socket.socket(family, kind, proto)

        super().__init__(resolver=GuardedResolver(policy), use_dns_cache=False,
                         socket_factory=guarded_socket, **options)


def connection_refusal(exc: BaseException) -> AddressRefused | None:
    """The address refusal a failed aiohttp request carries, raised or wrapped, else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, AddressRefused):
            return current
        if isinstance(current, _RefusedSocket):
            return current.refused
        seen.add(id(current))
        current = getattr(current, "os_error", None) or current.__cause__ or current.__context__
    return None


def _mapped(exc: aiohttp.ClientError, *, reading: bool) -> Exception:
    """An aiohttp failure as the httpx2 error the SDKs classify (timeout, connect, read)."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx2.ConnectTimeout(message)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return httpx2.ReadTimeout(message)
    if isinstance(exc, aiohttp.ClientConnectorError) or not reading and isinstance(
            exc, aiohttp.ClientConnectionError):
        return httpx2.ConnectError(message)
    if isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)):
        return httpx2.ReadError(message)
    return httpx2.TransportError(message)


class _AiohttpBody(httpx2.AsyncByteStream):
    """A response body as aiohttp hands it over: each network read as it arrives.

    `read_piece` is also handed out as the response's PIECE_READER extension, so the
    adapters read the body straight from aiohttp, past httpx2's stream wrappers."""

    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while piece := await self.read_piece():
            yield piece

    async def read_piece(self) -> bytes:
        """The next network read; `b""` at the end of the body."""
        try:
            return await self._response.content.readany()
        except aiohttp.ClientError as exc:
            raise _mapped(exc, reading=True) from exc

    async def read_piece_held(self) -> bytes:
        """`read_piece` for a reader that waits between reads (a paced one): the socket is
        left unread until the next read, so what the provider sends meanwhile waits in the
        kernel and comes in one receive. Read all along, each small event the provider
        writes costs a wake-up of the loop, a receive and a pass through the HTTP parser,
        only to wait in aiohttp's buffer for the same next read (a third of the bot's CPU
        with hundreds of answers streaming)."""
        self._hold(False)
        piece = await self.read_piece()
        if piece:
            self._hold(True)
        return piece

    def _hold(self, held: bool) -> None:
        """Stop (`held`) or restart reading this body's socket. Once the body has ended,
        aiohttp has given the connection back for reuse (`connection` is None): it is no
        longer this body's to hold, and was never left held (the piece that ended it came
        before any hold)."""
        connection = self._response.connection
        transport = connection.transport if connection is not None else None
        if transport is None or transport.is_closing() or transport.is_reading() != held:
            return
        if held:
            transport.pause_reading()
        else:
            transport.resume_reading()

    async def aclose(self) -> None:
        # A body read to its end keeps the connection for reuse (never held: see `_hold`);
        # one closed halfway, held or not, has its connection closed by aiohttp.
        self._response.release()


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """httpx2 requests sent through one aiohttp session, made on first use (inside the loop).

    With a `policy` (custom endpoints), every connection goes through `GuardedConnector`;
    aiohttp never follows a redirect here, and trusts no proxy setting of the environment.
    """

    def __init__(self, policy: EndpointPolicy | None = None, limits: httpx2.Limits = _CONNECTION_LIMITS) -> None:
        self._policy = policy
        self._limits = limits
        self._ssl = httpx2.create_ssl_context()  # the same certificate store httpx2 verifies with
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        options: dict[str, Any] = {"ssl": self._ssl, "limit": self._limits.max_connections or 0,
                                   "keepalive_timeout": self._limits.keepalive_expiry}
        connector = (aiohttp.TCPConnector(**options) if self._policy is None
                     else GuardedConnector(self._policy, **options))
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False)
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeout = request.extensions.get("timeout", {})
        session = self._session or self._open()
        try:
            response = await session.request(
                request.method, str(request.url), headers=request.headers.multi_items(),
                data=await request.aread() or None, allow_redirects=False, auto_decompress=False,
                timeout=aiohttp.ClientTimeout(sock_connect=timeout.get("connect"), sock_read=timeout.get("read"),
                                              connect=timeout.get("pool")),
                server_hostname=request.extensions.get("sni_hostname"))
        except aiohttp.ClientError as exc:
            refused = connection_refusal(exc)
            if refused is not None:
                raise refused from None
            raise _mapped(exc, reading=False) from exc
        body = _AiohttpBody(response)
        return httpx2.Response(response.status, headers=response.raw_headers, stream=body, request=request,
                               extensions={"http_version": b"HTTP/1.1", PIECE_READER: body.read_piece,
                                           HELD_PIECE_READER: body.read_piece_held,
                                           "reason_phrase": (response.reason or "").encode()})

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def sdk_http_client(
    client_class: type[httpx2.AsyncClient] = httpx2.AsyncClient,
    *,
    transport: Transport = "httpx",
    policy: EndpointPolicy | None = None,
    error_class: type[RedirectRefused] = RedirectRefused,
) -> httpx2.AsyncClient:
    """An httpx2 client for an SDK's `http_client=`: no redirects; `policy` guards connections.

    `client_class` is the SDK's own httpx2 client class (its timeouts and pool limits);
    `transport` picks what sends the bytes (module docstring); `error_class` is the
    redirect refusal the SDK passes on unwrapped (safe_transport.redirect_hook).
    """
    options = no_redirect_options(error_class)
    if transport == "aiohttp":
        options["transport"] = AiohttpTransport(policy)
    elif policy is not None:
        options["transport"] = GuardedTransport(policy)
    return client_class(**options)



def body_reader(response: httpx2.Response, *, held: bool = False) -> PieceReader:
    """A streamed response's body as it arrives, for the adapters' SSE decoders.

    A body sent without a content coding (every provider's event stream) is read
    straight from the transport: from aiohttp itself when AiohttpTransport sent the
    request (its PIECE_READER, or with `held`, for a reader that waits between reads, its
    HELD_PIECE_READER), else from the transport's byte stream; httpx2's `aiter_bytes` adds
    two async generators and a decoder per network read that only pass the bytes on. A
    compressed body still goes through `aiter_bytes`, which decodes it.
    """
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):
        return reader_of(response.aiter_bytes())
    direct = response.extensions.get(HELD_PIECE_READER if held else PIECE_READER)
    if direct is not None:
        return direct
    return reader_of(aiter(response.stream))  # type: ignore[arg-type]
