"""The search service behind the `web_search` tool: one backend, bounded, never raising.

`search_service(settings)` builds it from SEARCH_BACKEND / SEARCH_URL / SEARCH_API_KEY
(None when no backend is set, so no tool is offered); the bot makes one per process and
closes it at shutdown. `run(query, log)` is what the tool calls: the text for the model
(framed results, or the line saying search is unavailable) with the outcome recorded in
the answer's `SearchLog`.
"""

from __future__ import annotations

import logging
import secrets

from bot.capabilities.web_search.service.brave import BraveSearch
from bot.capabilities.web_search.service.framing import UNAVAILABLE, framed_results
from bot.capabilities.web_search.service.log import SearchLog, SearchOutcome
from bot.capabilities.web_search.service.results import MAX_RESULTS, SearchBackend, SearchFailed
from bot.capabilities.web_search.service.searxng import SearxngSearch
from bot.capabilities.web_search.service.tavily import TavilySearch
from bot.settings import Settings
from providers.endpoint_check import EndpointPolicy
from providers.log_safe import loggable

log = logging.getLogger(__name__)


class SearchService:
    """Runs searches on `backend`, at most `limit` results each."""

    def __init__(self, backend: SearchBackend, limit: int = MAX_RESULTS) -> None:
        self.backend = backend
        self.limit = max(1, min(limit, MAX_RESULTS))

    async def search(self, query: str) -> SearchOutcome:
        """One search; a failure is an outcome (logged without the query), never an exception."""
        try:
            results = await self.backend.search(query, self.limit)
        except SearchFailed as exc:
            log.warning("web search failed: %s", exc)
            return SearchOutcome(query=query, failure=str(exc))
        except Exception:  # noqa: BLE001 - a parser bug must not fail the answer either
            log.exception("web search on %s failed unexpectedly", loggable(self.backend.name))
            return SearchOutcome(query=query, failure=f"{self.backend.name} failed unexpectedly")
        return SearchOutcome(query=query, results=tuple(results))

    async def run(self, query: str, search_log: SearchLog | None = None) -> str:
        """The tool's answer to the model for `query`, recorded in `search_log`."""
        outcome = await self.search(query)
        if search_log is not None:
            search_log.add(outcome)
        if outcome.failed:
            return UNAVAILABLE
        return framed_results(query, list(outcome.results), secrets.token_hex(6))

    async def close(self) -> None:
        await self.backend.close()


def search_policy(settings: Settings) -> EndpointPolicy:
    """The address rules of the search service's connections."""
    return EndpointPolicy(allow_private=settings.ALLOW_PRIVATE_ENDPOINTS or settings.SEARCH_ALLOW_PRIVATE)


def search_service(settings: Settings, policy: EndpointPolicy | None = None) -> SearchService | None:
    """The configured search service, or None when SEARCH_BACKEND is unset.

    `load_settings` has already refused a missing URL or key, so this does not check again.
    """
    policy = policy or search_policy(settings)
    backend: SearchBackend
    if settings.SEARCH_BACKEND == "searxng":
        assert settings.SEARCH_URL is not None
        backend = SearxngSearch(settings.SEARCH_URL, policy)
    elif settings.SEARCH_BACKEND == "brave":
        assert settings.SEARCH_API_KEY is not None
        backend = BraveSearch(settings.SEARCH_API_KEY, policy, settings.SEARCH_URL)
    elif settings.SEARCH_BACKEND == "tavily":
        assert settings.SEARCH_API_KEY is not None
        backend = TavilySearch(settings.SEARCH_API_KEY, policy, settings.SEARCH_URL)
    else:
        return None
    return SearchService(backend)
