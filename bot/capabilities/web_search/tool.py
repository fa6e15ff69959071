"""The bot's `web_search` tool, for routes whose model does not search itself: the
operator's search service (SearXNG, Brave or Tavily, reached under the custom endpoints'
address rules). Bound to one answer's search (`bound_to`), it asks within the answer's
bound and the member's day and records what it found for the notes after the answer."""

from __future__ import annotations

import functools

from pydantic import BaseModel, Field

from bot.capabilities.web_search.answer import WEB_SEARCH_TOOL, AnswerSearch
from bot.capabilities.web_search.service.service import SearchService
from bot.tools.registry import Tool, ToolContext, ToolRegistry

SEARCHES_USED_UP = ("No more web searches are available for this answer. Answer from the results you have "
                    "and what you know, and tell the reader the answer may not be fully grounded in search results.")
WEB_SEARCH_DESCRIPTION = ("Search the web for current or specific information. Returns up to 5 results "
                          "(title, URL, snippet); cite the URLs you use.")


class WebSearchArgs(BaseModel):
    query: str = Field(..., min_length=1, max_length=400,
                       description="What to search the web for, as you would type it into a search engine.")


async def web_search(args: WebSearchArgs, _context: ToolContext, *, service: SearchService,
                     search: AnswerSearch | None = None) -> str:
    """Search results framed as untrusted data, or a line saying search is unavailable (a
    failed search never fails the answer); the outcome goes to the answer's search log."""
    if search is not None and not await search.may_search():
        return SEARCHES_USED_UP
    return await service.run(args.query, search.log if search is not None else None)


def search_tool(service: SearchService) -> Tool:
    """The tool on the operator's service, bound to no answer (no bound, nothing recorded)."""
    return Tool(WEB_SEARCH_TOOL, WEB_SEARCH_DESCRIPTION, WebSearchArgs, functools.partial(web_search, service=service))


def bound_to(registry: ToolRegistry, search: AnswerSearch) -> ToolRegistry:
    """`registry` with its `web_search` tool bound to one answer's search."""
    tool = registry.get(WEB_SEARCH_TOOL)
    return registry if tool is None else registry.rebound(WEB_SEARCH_TOOL, functools.partial(tool.run, search=search))
