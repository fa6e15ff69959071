"""SearXNG's search API: `GET <base>/search?q=…&format=json`, no key.

The instance must list `json` under `search.formats` in its settings.yml (it answers 403
otherwise; the compose `search` profile's settings do). Results are `results[]` with
`title`, `url` and `content`; SearXNG takes no result count, so the list is cut here.
"""

from __future__ import annotations

from typing import Any

from bot.capabilities.web_search.service.http import GuardedHttp
from bot.capabilities.web_search.service.results import SearchFailed, SearchResult, bounded
from providers.endpoint_check import EndpointPolicy


def parse_searxng(body: Any, limit: int) -> list[SearchResult]:
    """The results of a SearXNG JSON answer (SearchFailed when it has no result list)."""
    items = body.get("results") if isinstance(body, dict) else None
    if not isinstance(items, list):
        raise SearchFailed("SearXNG answered without a result list")
    return bounded(((i.get("title"), i.get("url"), i.get("content")) for i in items if isinstance(i, dict)), limit)


class SearxngSearch:
    name = "searxng"

    def __init__(self, base_url: str, policy: EndpointPolicy, **http: Any) -> None:
        self._url = base_url.rstrip("/") + "/search"
        self._http = GuardedHttp("SearXNG", policy, **http)

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        body = await self._http.request_json("GET", self._url, params={"q": query, "format": "json"},
                                             headers={"Accept": "application/json"})
        return parse_searxng(body, limit)

    async def close(self) -> None:
        await self._http.close()
