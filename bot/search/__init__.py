"""Bot-side web search for routes without a search of their own (the `web_search` tool)."""

from bot.search.log import SearchLog, SearchOutcome
from bot.search.results import SearchBackend, SearchFailed, SearchResult
from bot.search.service import SearchService, search_service

__all__ = ["SearchBackend", "SearchFailed", "SearchLog", "SearchOutcome", "SearchResult", "SearchService",
           "search_service"]
