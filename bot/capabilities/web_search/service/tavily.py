"""Tavily's search API: `POST <base>/search` with a JSON body (`query`, `max_results`) and
the key as `Authorization: Bearer tvly-…`. Results are `results[]` with `title`, `url`
and `content`."""

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

TAVILY_URL = "https://api.tavily.com"


def parse_tavily(body: Any, limit: int) -> list[SearchResult]:
    items = body.get("results") if isinstance(body, dict) else None
    if not isinstance(items, list):
        raise SearchFailed("Tavily answered without a result list")
    return bounded(((i.get("title"), i.get("url"), i.get("content")) for i in items if isinstance(i, dict)), limit)


class TavilySearch:
    name = "tavily"

    def __init__(self, api_key: SecretStr, policy: EndpointPolicy, base_url: str | None = None,
                 **http: Any) -> None:
        self._key = api_key  # SecretStr: its repr is masked
        self._url = (base_url or TAVILY_URL).rstrip("/") + "/search"
        self._http = GuardedHttp("Tavily", policy, **http)

    def __repr__(self) -> str:
        return f"TavilySearch(url={self._url!r}, api_key={self._key!r})"

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        body = await self._http.request_json(
            "POST", self._url, body={"query": query, "max_results": asked_for(limit)},
            headers={"Accept": "application/json", "Authorization": f"Bearer {self._key.get_secret_value()}"})
        return parse_tavily(body, limit)

    async def close(self) -> None:
        await self._http.close()
