"""The bot's `web_search` tool, for routes whose model does not search itself: the
operator's search service (SearXNG, Brave or Tavily, reached under the custom endpoints'
address rules), asked within the answer's bound and the member's day."""

from __future__ import annotations

import functools

from pydantic import BaseModel, Field

from bot.capabilities.web_search.answer import WEB_SEARCH_TOOL
from bot.capabilities.web_search.service.service import SearchService
from bot.tools.registry import Tool, ToolContext

SEARCHES_USED_UP = ("No more web searches are available for this answer. Answer from the results you have "
                    "and what you know, and tell the reader the answer may not be fully grounded in search results.")
WEB_SEARCH_DESCRIPTION = ("Search the web for current or specific information. Returns up to 5 results "
                          "(title, URL, snippet); cite the URLs you use.")


class WebSearchArgs(BaseModel):
    query: str = Field(..., min_length=1, max_length=400,
                       description="What to search the web for, as you would type it into a search engine.")


async def web_search(args: WebSearchArgs, context: ToolContext, *, service: SearchService) -> str:
    """Search results framed as untrusted data, or a line saying search is unavailable (a
    failed search never fails the answer); the outcome goes to the answer's search log."""
    if context.may_search is not None and not await context.may_search():
        return SEARCHES_USED_UP
    return await service.run(args.query, context.search_log)


def search_tool(service: SearchService) -> Tool:
    """The tool, bound to the operator's service."""
    return Tool(WEB_SEARCH_TOOL, WEB_SEARCH_DESCRIPTION, WebSearchArgs, functools.partial(web_search, service=service))
