"""Web search's seams: whether an answer searches, how each attempt does, what is said
and counted afterwards (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.capabilities.web_search.answer import AnswerSearch
from bot.capabilities.web_search.counting import SearchesWrite, searches_counted
from bot.capabilities.web_search.notes import search_notes
from bot.capabilities.web_search.settings import DEFAULT_MAX_SEARCHES
from bot.capabilities.web_search.tool import bound_to
from bot.question.seams import AnswerPart, Ended, Joining
from bot.tools import ToolLoop
from bot.turn.seams import TurnEnding
from bot.usage.limits import may_search, searches_left
from providers.model_capabilities import ModelCapabilities
from providers.types import ChatRequest


class WebSearch:
    """Joins an answer where the server turned search on (`/settings web-search`), or on
    the operator's default route with WEB_SEARCH."""

    def join(self, joining: Joining) -> AnswerPart | None:
        question, services = joining.question, joining.services
        server = question.config.server
        on = server.web_search if server is not None else False
        if not (on or (joining.route.operator_default and services.settings.WEB_SEARCH)):
            return None
        sessions, guild_id, asker, limits = services.sessions, question.where.guild_id, question.asker_id, question.limits
        search = AnswerSearch(server.max_searches if server is not None else DEFAULT_MAX_SEARCHES,
                              allowed=lambda paid_by: may_search(sessions, guild_id, asker, limits, paid_by),
                              left=lambda paid_by: searches_left(sessions, guild_id, asker, limits, paid_by))
        line = server is None or bool(server.settings.value("web_search", "sources_line"))
        return SearchPart(search, joining, line)


@dataclass
class SearchPart(AnswerPart):
    """One answer's search, at each seam it fills."""

    search: AnswerSearch
    joining: Joining
    sources_line: bool = True  # `/settings sources-line`: off, the answer ends without it

    def tools(self, loop: ToolLoop) -> ToolLoop:
        """The bot's `web_search` tool when the operator named a search service (a native
        route drops it per attempt)."""
        registry = self.joining.services.search_tools
        if registry is None:
            return loop
        return ToolLoop(bound_to(registry, self.search), loop.context)

    async def for_attempt(self, request: ChatRequest, capabilities: ModelCapabilities, paid_by: str) -> ChatRequest:
        return await self.search.request_for(request, capabilities, paid_by)

    async def after(self, ending: TurnEnding) -> None:
        await search_notes(ending, self.search, self.sources_line)

    async def books(self, ended: Ended) -> None:
        """The provider's own searches count in the member's day (the bot's own were
        counted before each ran)."""
        paid_by = ended.outcome.credential_source
        if not self.search.native_searches or paid_by is None:
            return
        question, services = ended.question, self.joining.services
        write = searches_counted(question.where.guild_id, question.asker_id, question.limits, paid_by,
                                 self.search.native_searches)
        if write is not None and services.writes is not None and services.sessions is not None:
            services.writes.put(write)


__all__ = ["SearchPart", "SearchesWrite", "WebSearch"]
