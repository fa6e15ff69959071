"""Checking a custom endpoint set from Discord before any request goes to it (issue 4.6).

A base URL typed by a server manager must not turn the bot into a way to reach the
host's own network: loopback, private, link-local and other non-public addresses are
refused unless the operator allows them (a self-hoster running a local model), and the
host name is resolved so a public-looking name pointing at 127.0.0.1 is refused too.
Cloud metadata services are refused always: no model server lives there, and they hold
the machine's credentials. The operator's own environment settings are not checked.

What this cannot see: a name that resolves differently when the request is made (DNS
rebinding). Operators who need that closed should pin egress at the network level.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

RESOLVE_TIMEOUT = 5.0

METADATA_HOSTS = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "metadata.azure.internal", "metadata.tencentyun.com",
})
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OCI, DigitalOcean, ...
    "169.254.170.2",    # AWS ECS task credentials
    "fd00:ec2::254",    # AWS IMDS over IPv6
    "100.100.100.200",  # Alibaba Cloud
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


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


def address_problem(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why `address` may not be used, or None. Metadata addresses are never allowed."""
    inner = _embedded_ipv4(address)
    if inner is not None:
        problem = address_problem(inner, allow_private=allow_private)
        return f"{problem} (inside {address})" if problem else None
    if address in METADATA_ADDRESSES:
        return f"{address} is a cloud metadata address"
    if allow_private:
        return None
    for label, flag in (
        ("unspecified", address.is_unspecified), ("loopback", address.is_loopback),
        ("link-local", address.is_link_local), ("multicast", address.is_multicast),
        ("reserved", address.is_reserved), ("private", address.is_private),
    ):
        if flag:
            return f"{address} is a {label} address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


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
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise EndpointRejected("malformed", "The endpoint URL has no host name.")
    return host, scheme, port or (443 if scheme == "https" else 80)


async def _resolve(host: str, port: int) -> list[IPAddress]:
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


async def check_custom_endpoint(base_url: str, *, allow_private: bool = False) -> CheckedEndpoint:
    """Refuse `base_url` (EndpointRejected, with a message fit for the user) or describe it.

    Every address the host resolves to must be allowed: one private answer is enough to
    refuse, because the HTTP client may pick any of them.
    """
    host, scheme, port = _parse(base_url)
    where = f"{scheme}://{host}:{port}"
    if host.lower() in METADATA_HOSTS:
        raise EndpointRejected("metadata", f"{where} is a cloud metadata service and cannot be used.")
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    addresses = [literal] if literal is not None else await _resolve(host, port)
    for address in addresses:
        problem = address_problem(address, allow_private=allow_private)
        if problem is not None:
            reason = "metadata" if "metadata" in problem else "private"
            hint = "" if reason == "metadata" else (
                " Private and local endpoints are refused unless the bot's operator sets "
                "ALLOW_PRIVATE_ENDPOINTS=true."
            )
            raise EndpointRejected(reason, f"{where} cannot be used: {problem}.{hint}")
    return CheckedEndpoint(base_url=base_url.strip(), host=host, addresses=tuple(str(a) for a in addresses))
