"""Checking a custom endpoint set from Discord before any request goes to it.

A base URL typed by a server manager must not turn the bot into a way to reach the
host's own network: loopback, private, link-local and other non-public addresses are
refused unless the operator allows them (a self-hoster running a local model), and the
host name is resolved so a public-looking name pointing at 127.0.0.1 is refused too.
Cloud metadata services and container credential endpoints are refused always: no model
server lives there, and they hand out the machine's or the task's credentials.

The same rules run twice: here when the endpoint is set, and again for every connection
the custom provider's HTTP client opens (`providers.safe_transport`,
`providers.http_transport.GuardedConnector`), against the addresses resolved at that
moment, so a name that later resolves elsewhere (DNS rebinding) is refused before any
byte is sent. A host is read the way the HTTP client reads it (`normalized_host`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import yarl

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[Sequence[IPAddress]]]
"""`(host, port) -> addresses`; raises EndpointRejected("unresolvable") when there are none."""

RESOLVE_TIMEOUT = 5.0

METADATA_HOSTS = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "metadata.azure.internal", "metadata.tencentyun.com",
})
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OCI, DigitalOcean, ...
    "fd00:ec2::254",    # AWS IMDS over IPv6
    "100.100.100.200",  # Alibaba Cloud
))
CREDENTIAL_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.170.2",    # AWS ECS task role credentials
    "169.254.170.23",   # AWS EKS Pod Identity agent
    "fd00:ec2::23",     # AWS EKS Pod Identity agent over IPv6
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_PRIVATE_HINT = (
    " Private and local endpoints are refused unless the bot's operator sets "
    "ALLOW_PRIVATE_ENDPOINTS=true."
)


class EndpointRejected(ValueError):
    """The endpoint may not be used; `reason` is a short machine-readable code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CheckedEndpoint:
    base_url: str
    host: str
    addresses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AddressRefusal:
    """Why one address may not be used.

    `reason` is "metadata" (never allowed: metadata and credential services) or
    "private" (allowed when the operator allows private endpoints).
    """

    reason: str
    text: str


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_refusal(
    address: IPAddress, *, allow_private: bool, also_allowed: frozenset[IPAddress] = frozenset()
) -> AddressRefusal | None:
    """Why `address` may not be used, or None.

    Metadata and container credential addresses are never allowed; other non-public
    addresses only with `allow_private` or when listed exactly in `also_allowed`.
    """
    inner = _embedded_ipv4(address)
    if inner is not None:
        refusal = address_refusal(inner, allow_private=allow_private, also_allowed=also_allowed)
        return AddressRefusal(refusal.reason, f"{refusal.text} (inside {address})") if refusal else None
    if address in METADATA_ADDRESSES:
        return AddressRefusal("metadata", f"{address} is a cloud metadata address")
    if address in CREDENTIAL_ADDRESSES:
        return AddressRefusal("metadata", f"{address} is a container credential address")
    if allow_private or address in also_allowed:
        return None
    for label, flag in (
        ("unspecified", address.is_unspecified), ("loopback", address.is_loopback),
        ("link-local", address.is_link_local), ("multicast", address.is_multicast),
        ("reserved", address.is_reserved), ("private", address.is_private),
    ):
        if flag:
            return AddressRefusal("private", f"{address} is a {label} address")
    if not address.is_global:
        return AddressRefusal("private", f"{address} is not a public address")
    return None


def normalized_host(host: str) -> str:
    """`host` as the HTTP client connects to it: lower case, IDNA-mapped the way yarl maps it.

    yarl (under aiohttp) maps fullwidth, circled and other compatibility digits and the
    ideographic full stops to ASCII, so `１２７。0。0。①` is the literal 127.0.0.1 by the time
    the client connects; a check that read the host as written would take it for a name.
    """
    bare = host.strip("[]")
    try:
        return yarl.URL.build(scheme="http", host=bare).raw_host or ""
    except (ValueError, UnicodeError):
        raise EndpointRejected("malformed", "The host name is not valid.") from None


def connection_host(url: str) -> str:
    """The host of `url` as the HTTP client connects to it (`normalized_host`), or ""."""
    try:
        return yarl.URL(url).raw_host or ""
    except (ValueError, UnicodeError, TypeError):
        raise EndpointRejected("malformed", "The URL's host name is not valid.") from None


def _parse(base_url: str) -> tuple[str, str, int]:
    if not isinstance(base_url, str) or not base_url.strip():
        raise EndpointRejected("malformed", "The endpoint URL is empty.")
    text = base_url.strip()
    if any(ch.isspace() or ord(ch) < 32 for ch in text):
        raise EndpointRejected("malformed", "The endpoint URL contains spaces or control characters.")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise EndpointRejected("malformed", f"The endpoint URL is not valid ({exc}).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"'{scheme}'" if scheme else "no scheme"
        raise EndpointRejected("scheme", f"The endpoint must start with http:// or https:// (got {shown}).")
    if parts.username is not None or parts.password is not None:
        raise EndpointRejected("credentials", "The endpoint URL must not contain a user name or password.")
    host = connection_host(text).rstrip(".")
    if not host:
        raise EndpointRejected("malformed", "The endpoint URL has no host name.")
    return host, scheme, port or (443 if scheme == "https" else 80)


async def resolve_host(host: str, port: int) -> list[IPAddress]:
    """The addresses the system resolver gives `host` (the default `Resolver`)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT
        )
    except (OSError, TimeoutError, UnicodeError) as exc:
        raise EndpointRejected("unresolvable", f"The host {host} could not be resolved ({exc}).") from None
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        literal = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone id
        address = ipaddress.ip_address(literal)
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise EndpointRejected("unresolvable", f"The host {host} has no addresses.")
    return addresses


@dataclass(frozen=True, slots=True)
class EndpointPolicy:
    """The operator's rules for custom endpoints: which addresses one may reach, how its
    host name is resolved, and whether it takes OpenAI's `reasoning_effort`.

    `allow_private` is the operator's ALLOW_PRIVATE_ENDPOINTS. `also_allowed` admits a few
    exact non-public addresses without opening every private range (the test suite uses
    it to stand a loopback server in for a public one). Metadata and container
    credential addresses stay refused whatever these say. `resolver` defaults to the
    system resolver; tests give a fixed table. `reasoning_effort` is the operator's
    CUSTOM_REASONING_EFFORT: what a custom server takes cannot be known from here
    (`providers/openai_compat/reasoning.py`).
    """

    allow_private: bool = False
    also_allowed: frozenset[IPAddress] = frozenset()
    resolver: Resolver = resolve_host
    reasoning_effort: bool = False

    def refusal(self, address: IPAddress) -> AddressRefusal | None:
        return address_refusal(address, allow_private=self.allow_private, also_allowed=self.also_allowed)

    async def allowed_addresses(self, host: str, port: int) -> list[IPAddress]:
        """Every address `host` stands for, all of them allowed; else EndpointRejected.

        One refused answer is enough to refuse: the HTTP client may pick any of them.
        The message names the host and the reason, never a path or query.
        """
        host = normalized_host(host).rstrip(".")
        where = f"{host}:{port}"
        if host.lower() in METADATA_HOSTS:
            raise EndpointRejected("metadata", f"{where} is a cloud metadata service and cannot be used.")
        try:
            addresses: Sequence[IPAddress] = [ipaddress.ip_address(host)]
        except ValueError:
            addresses = await self.resolver(host, port)
        if not addresses:
            raise EndpointRejected("unresolvable", f"The host {host} has no addresses.")
        for address in addresses:
            refusal = self.refusal(address)
            if refusal is not None:
                hint = _PRIVATE_HINT if refusal.reason == "private" else ""
                raise EndpointRejected(refusal.reason, f"{where} cannot be used: {refusal.text}.{hint}")
        return list(addresses)


async def check_custom_endpoint(
    base_url: str, *, allow_private: bool = False, policy: EndpointPolicy | None = None
) -> CheckedEndpoint:
    """Refuse `base_url` (EndpointRejected, with a message fit for the user) or describe it.

    `policy` replaces the default one built from `allow_private` (tests give their own
    resolver there).
    """
    host, scheme, port = _parse(base_url)
    policy = policy if policy is not None else EndpointPolicy(allow_private=allow_private)
    try:
        addresses = await policy.allowed_addresses(host, port)
    except EndpointRejected as rejected:
        if rejected.reason == "unresolvable":
            raise
        raise EndpointRejected(rejected.reason, f"{scheme}://{rejected}") from None
    return CheckedEndpoint(base_url=base_url.strip(), host=host, addresses=tuple(str(a) for a in addresses))
