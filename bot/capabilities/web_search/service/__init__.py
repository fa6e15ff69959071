"""Bot-side web search for routes without a search of their own (the `web_search` tool)."""

from bot.capabilities.web_search.service.log import SearchLog, SearchOutcome
from bot.capabilities.web_search.service.results import SearchBackend, SearchFailed, SearchResult
from bot.capabilities.web_search.service.service import SearchService, search_service

__all__ = ["SearchBackend", "SearchFailed", "SearchLog", "SearchOutcome", "SearchResult", "SearchService",
           "search_service"]
