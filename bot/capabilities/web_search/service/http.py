"""The search clients' HTTP: one aiohttp session held to the custom endpoints' address rules.

A search URL is the operator's, but the answer it fetches is steered by a model, and the
service's host name may resolve anywhere later; so every connection goes through
`providers.http_transport.GuardedConnector` (private addresses only when the policy allows
them, metadata and credential addresses never; a name resolved and checked at each new
connection, every socket checked for the address it opens to, a literal's included).
Redirects are never followed (a 3xx is a failure), no proxy or environment setting is
trusted, and each request is bounded in time and in bytes read.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from bot.capabilities.web_search.service.results import SearchFailed
from providers.endpoint_check import EndpointPolicy, EndpointRejected
from providers.http_transport import GuardedConnector, connection_refusal
from providers.safe_transport import RequestRefused

TIMEOUT_SECONDS = 8.0  # under the tool loop's 10 s, so the model hears "unavailable", not a timeout
MAX_BODY_BYTES = 1_000_000
USER_AGENT = "llm-discord-bot (web_search tool)"


class GuardedHttp:
    """JSON requests to one search service; made inside the loop, closed with `close`."""

    def __init__(self, service: str, policy: EndpointPolicy, *, timeout: float = TIMEOUT_SECONDS,
                 max_bytes: int = MAX_BODY_BYTES) -> None:
        self._service = service
        self._policy = policy
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        connector = GuardedConnector(self._policy, limit=20)
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                              headers={"User-Agent": USER_AGENT})
        return self._session

    async def request_json(self, method: str, url: str, *, headers: dict[str, str] | None = None,
                           params: dict[str, str] | None = None, body: Any = None) -> Any:
        """The decoded JSON answer of a 2xx response; any other outcome is SearchFailed."""
        try:
            async with asyncio.timeout(self._timeout):
                session = self._session or self._open()
                async with session.request(method, url, headers=headers, params=params, json=body,
                                           allow_redirects=False) as response:
                    if 300 <= response.status < 400:
                        raise self._failed(f"answered with a redirect (HTTP {response.status}), "
                                           "which is not followed")
                    if response.status >= 400:
                        raise self._failed(f"answered HTTP {response.status}")
                    raw = await self._body(response)
        except TimeoutError:
            raise self._failed(f"did not answer within {self._timeout:g} s") from None
        except (EndpointRejected, RequestRefused) as refused:
            raise self._failed(f"may not be reached: {refused}") from None
        except aiohttp.ClientConnectorDNSError:
            raise self._failed("has a host name that does not resolve") from None
        except (aiohttp.ClientError, OSError) as exc:
            refused = connection_refusal(exc)
            if refused is not None:
                raise self._failed(f"may not be reached: {refused}") from None
            raise self._failed(f"could not be reached ({type(exc).__name__})") from None
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise self._failed("answered something that is not JSON") from None

    async def _body(self, response: aiohttp.ClientResponse) -> bytes:
        """The (decoded) body, refused once it passes `max_bytes`: a size it announces is
        not trusted, what arrives is counted."""
        if (response.content_length or 0) > self._max_bytes:
            raise self._failed(f"answered more than {self._max_bytes} bytes")
        raw = bytearray()
        async for piece in response.content.iter_any():
            raw += piece
            if len(raw) > self._max_bytes:
                raise self._failed(f"answered more than {self._max_bytes} bytes")
        return bytes(raw)

    def _failed(self, what: str) -> SearchFailed:
        return SearchFailed(f"{self._service} {what}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
