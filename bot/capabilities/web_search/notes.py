"""What an answer that may have searched says under it: its sources (the line, and the
Sources button when there are more; neither where the server turned the line off), and a
note when a search failed or was refused, so a reader knows the answer is not grounded
on the web."""

from __future__ import annotations

import dataclasses

from bot.capabilities.web_search.answer import AnswerSearch, answer_sources
from bot.turn.seams import TurnEnding
from providers.i18n import t
from providers.types import Usage
from stream.orchestrator import ending_of
from stream.sources import sources_line


async def search_notes(ending: TurnEnding, search: AnswerSearch, show_sources: bool = True) -> None:
    """The sources and notes under the answer; its queries and bot-side searches go into
    the result, for the thought log and usage (and its sources, for the answer's record,
    also without the line)."""
    result, delivery, locale = ending.result, ending.delivery, ending.locale
    result.sources = answer_sources(result.sources, search.log.sources, delivery.full_text)
    result.searches = [*result.searches, *(query for query in search.log.queries if query)]
    search.native_searches = result.usage.searches or 0 if result.usage is not None else 0
    if search.bot_searches:
        result.usage = (result.usage or Usage()) + Usage(searches=search.bot_searches)
    if result.sources and delivery.messages and show_sources:
        line = sources_line(result.sources, t("chat.search.sources", locale))
        await delivery.add_note(line, ending=dataclasses.replace(ending_of(result), sources=len(result.sources)))
    key = "chat.search.unavailable" if search.failed else "chat.search.limit" if search.refused else None
    if key is not None and delivery.messages:
        await delivery.add_note(f"-# {t(key, locale)}")
