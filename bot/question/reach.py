"""What one answer may reach besides the model: the web (search), the bot's tools, and the
pages its question links — each decided once from the question's configuration read and
the operator's settings, and handed to the turn."""

from __future__ import annotations

from bot.capabilities.web_search.settings import DEFAULT_MAX_SEARCHES
from bot.links import LinkPolicy
from bot.question.context import Question, Services
from bot.repo.usage import Limits
from bot.settings import Settings
from bot.tools import ToolContext, ToolLoop
from bot.turn import TurnRoute
from bot.turn.search import AnswerSearch
from bot.usage.limits import count_searches, may_search, searches_left


def server_limits(question: Question) -> Limits:
    """The server's limits as the question read them (none in a DM or an unknown server)."""
    server = question.config.server
    return server.limits if server is not None else Limits()


def answer_search(question: Question, route: TurnRoute, services: Services) -> AnswerSearch | None:
    """The answer's web search: on where the server turned it on, or on the operator's
    default route with WEB_SEARCH; None: no search of any kind."""
    server = question.config.server
    if not ((server is not None and server.web_search) or (route.operator_default and services.settings.WEB_SEARCH)):
        return None
    sessions, guild_id, asker, limits = services.sessions, question.where.guild_id, question.asker_id, \
        server_limits(question)
    return AnswerSearch(server.max_searches if server is not None else DEFAULT_MAX_SEARCHES,
                        allowed=lambda paid_by: may_search(sessions, guild_id, asker, limits, paid_by),
                        left=lambda paid_by: searches_left(sessions, guild_id, asker, limits, paid_by))


async def count_native_searches(question: Question, services: Services, search: AnswerSearch | None,
                                paid_by: str | None) -> None:
    """The provider's own searches count in the member's day, once the answer is over (the
    bot's own were counted before each ran)."""
    if search is not None and search.native_searches and paid_by is not None:
        await count_searches(services.sessions, question.where.guild_id, question.asker_id, server_limits(question),
                             paid_by, search.native_searches)


def answer_tools(question: Question, search: AnswerSearch | None, services: Services) -> ToolLoop:
    """The tools of the answer: with `web_search` when it may search and the operator
    named a search service (a native route drops it per attempt)."""
    message = question.message
    if search is None or services.search_tools is None:
        return ToolLoop(services.tools, ToolContext(message.channel, message.author))
    return ToolLoop(services.search_tools, ToolContext(message.channel, message.author, search_log=search.log,
                                                       may_search=search.may_search))


def link_policy(question: Question, settings: Settings) -> LinkPolicy | None:
    """How the question's links are read: None when the operator (READ_LINKS) or the
    server (`/settings read-links`) turned it off."""
    server = question.config.server
    if not settings.READ_LINKS or (server is not None and not server.read_links):
        return None
    return LinkPolicy(allow_private=settings.LINKS_ALLOW_PRIVATE)
