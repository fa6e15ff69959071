"""Brave's Web Search API: `GET <base>/res/v1/web/search?q=…&count=N` with the key in the
`X-Subscription-Token` header. Results are `web.results[]` with `title`, `url` and
`description` (a query Brave finds nothing for has no `web` part at all)."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from bot.capabilities.web_search.service.http import GuardedHttp
from bot.capabilities.web_search.service.results import (
    SearchFailed,
    SearchResult,
    asked_for,
    bounded,
)
from providers.endpoint_check import EndpointPolicy

BRAVE_URL = "https://api.search.brave.com"


def parse_brave(body: Any, limit: int) -> list[SearchResult]:
    if not isinstance(body, dict):
        raise SearchFailed("Brave Search answered something other than a JSON object")
    web = body.get("web")
    items = web.get("results") if isinstance(web, dict) else []
    if not isinstance(items, list):
        raise SearchFailed("Brave Search answered without a result list")
    return bounded(((i.get("title"), i.get("url"), i.get("description")) for i in items if isinstance(i, dict)),
                   limit)


class BraveSearch:
    name = "brave"

    def __init__(self, api_key: SecretStr, policy: EndpointPolicy, base_url: str | None = None,
                 **http: Any) -> None:
        self._key = api_key  # SecretStr: its repr is masked
        self._url = (base_url or BRAVE_URL).rstrip("/") + "/res/v1/web/search"
        self._http = GuardedHttp("Brave Search", policy, **http)

    def __repr__(self) -> str:
        return f"BraveSearch(url={self._url!r}, api_key={self._key!r})"

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        body = await self._http.request_json(
            "GET", self._url, params={"q": query, "count": str(asked_for(limit))},
            headers={"Accept": "application/json", "X-Subscription-Token": self._key.get_secret_value()})
        return parse_brave(body, limit)

    async def close(self) -> None:
        await self._http.close()
