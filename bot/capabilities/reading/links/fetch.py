"""Fetching one link: public addresses only, redirects followed by hand, bounded in time and bytes.

Every connection goes through `providers.http_transport.GuardedConnector` with the
link policy's address rules (the custom endpoints' rules, with LINKS_ALLOW_PRIVATE of
its own): a name is resolved and checked when each connection is made (no DNS cache, so
a name that answers a public address first and a private one later is refused), and
every socket, a literal address's included, is checked for the address it opens to.
aiohttp follows no redirect itself: each hop's URL is checked (scheme, no user name, a
host) and goes through the same connector, at most `max_redirects` of them. No proxy or
environment setting is trusted. The body is read in pieces and the read stops one piece
past the bound, so an endless or huge body costs at most that much.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import aiohttp

from bot.capabilities.reading.links.policy import LinkPolicy
from bot.capabilities.reading.links.results import (
    BAD_URL,
    BLOCKED_ADDRESS,
    HTTP_STATUS,
    PRIVATE_ADDRESS,
    TIMEOUT,
    TOO_LARGE,
    TOO_MANY_REDIRECTS,
    UNREACHABLE,
    WRONG_TYPE,
)
from providers.endpoint_check import EndpointRejected
from providers.http_transport import GuardedConnector, connection_refusal
from providers.safe_transport import AddressRefused

USER_AGENT = "llm-discord-bot (link reader: reads a page a member linked in a question)"
ACCEPT = "text/html, text/plain;q=0.9, application/pdf;q=0.8"
MEDIA_TYPES = frozenset({"text/html", "text/plain", "application/pdf"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PIECE = 64 * 1024


class LinkRefused(Exception):
    """Why a link was not fetched: a reason key of `bot.capabilities.reading.links.results` and a short detail."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Fetched:
    """A page's body, read whole within the bounds, and what it says it is."""

    url: str
    media_type: str
    charset: str | None
    body: bytes


def open_session(policy: LinkPolicy) -> aiohttp.ClientSession:
    """A session whose every connection is checked against the link policy's address rules."""
    connector = GuardedConnector(policy.endpoint_policy(), limit=policy.max_links * 2)
    return aiohttp.ClientSession(connector=connector, trust_env=False,
                                 headers={"User-Agent": USER_AGENT, "Accept": ACCEPT})


def _refused_address(rejected: EndpointRejected | AddressRefused) -> LinkRefused:
    detail = str(rejected)
    if rejected.reason == "metadata":
        return LinkRefused(BLOCKED_ADDRESS, detail)
    if rejected.reason == "private":
        return LinkRefused(PRIVATE_ADDRESS, detail)
    if rejected.reason == "unresolvable":
        return LinkRefused(UNREACHABLE, detail)
    return LinkRefused(BAD_URL, detail)


def _check_target(url: str) -> None:
    """Refuse a URL that is not plain http(s) to a host. Its address is checked by the
    connector, on the host as the client connects to it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise LinkRefused(BAD_URL, "not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise LinkRefused(BAD_URL, f"the scheme {scheme or '(none)'} is not http or https")
    if parts.username is not None or parts.password is not None:
        raise LinkRefused(BAD_URL, "the URL carries a user name or password")
    if not parts.hostname:
        raise LinkRefused(BAD_URL, "the URL has no host")


async def _read_bounded(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    declared = response.content_length
    if declared is not None and declared > max_bytes:
        raise LinkRefused(TOO_LARGE, f"declares {declared} bytes, over {max_bytes}")
    body = bytearray()
    async for piece in response.content.iter_chunked(_PIECE):
        body += piece
        if len(body) > max_bytes:
            raise LinkRefused(TOO_LARGE, f"more than {max_bytes} bytes")
    return bytes(body)


async def _one_request(session: aiohttp.ClientSession, url: str,
                       policy: LinkPolicy) -> Fetched | str:
    """The fetched page, or the next URL when `url` answers with a redirect."""
    async with session.get(url, allow_redirects=False) as response:
        status = response.status
        if status in _REDIRECTS:
            location = response.headers.get("Location")
            if not location:
                raise LinkRefused(HTTP_STATUS, f"HTTP {status} without a Location")
            return urljoin(str(response.url), location)
        if not 200 <= status < 300:
            raise LinkRefused(HTTP_STATUS, f"HTTP {status}")
        media_type = response.content_type.lower()
        if media_type not in MEDIA_TYPES:
            raise LinkRefused(WRONG_TYPE, f"{media_type} is not read")
        body = await _read_bounded(response, policy.max_bytes)
        return Fetched(str(response.url), media_type, response.charset, body)


def _failed_request(exc: aiohttp.ClientError | OSError | AddressRefused) -> LinkRefused:
    refused = connection_refusal(exc)
    if refused is not None:
        return _refused_address(refused)
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return LinkRefused(UNREACHABLE, "the host name does not resolve")
    if isinstance(exc, aiohttp.InvalidURL):
        return LinkRefused(BAD_URL, "not a valid URL")
    return LinkRefused(UNREACHABLE, f"could not be reached ({type(exc).__name__})")


async def _follow(session: aiohttp.ClientSession, url: str, policy: LinkPolicy) -> Fetched:
    current = url
    for _hop in range(policy.max_redirects + 1):
        _check_target(current)
        try:
            outcome = await _one_request(session, current, policy)
        except (aiohttp.ClientError, OSError, AddressRefused) as exc:
            raise _failed_request(exc) from None
        except ValueError:  # yarl's, for a host IDNA refuses
            raise LinkRefused(BAD_URL, "not a valid URL") from None
        if isinstance(outcome, Fetched):
            return outcome
        current = outcome
    raise LinkRefused(TOO_MANY_REDIRECTS, f"more than {policy.max_redirects} redirects")


async def fetch(session: aiohttp.ClientSession, url: str, policy: LinkPolicy) -> Fetched:
    """`url`'s body within the policy's bounds, after its redirects; else LinkRefused."""
    try:
        async with asyncio.timeout(policy.timeout):
            return await _follow(session, url, policy)
    except TimeoutError:
        raise LinkRefused(TIMEOUT, f"not read within {policy.timeout:g} s") from None
