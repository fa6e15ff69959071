"""Web search for one answer: whether it may search, how, and what it says afterwards.

A route whose model searches natively (`ModelCapabilities.web_search`) gets
`ChatRequest.web_search` and no bot tool; every other route gets the bot's `web_search`
tool when the operator named a search service (`bot.capabilities.web_search.service`), else no search at all.
Each attempt asks again (a fallback may change the family). Searches are bounded per
answer (the server's `max_searches`) and, where the server's keys pay, per member and
day (`/limits set searches_per_day`): a native request asks for no more than are left;
each bot-side search asks first and is counted (`bot.usage.limits.may_search`).

After the answer: a small sources line (`stream.sources`) when it was grounded on pages,
and a note when a search failed or the member's searches ran out, so a reader knows the
answer is not grounded on the web.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from bot.capabilities.web_search.service.log import SearchLog, SearchOutcome
from providers.model_capabilities import ModelCapabilities
from providers.types import ChatRequest, Source, WebSearch
from stream.sources import unique_sources

WEB_SEARCH_TOOL = "web_search"
# How a route searches: off where it is asked, natively, through the bot's search
# service, or not at all though it is on (a model that cannot and no service named).
SearchReach = Literal["off", "native", "service", "none"]
LIMIT_FAILURE = "limit"  # a search the member's daily limit (or the answer's bound) refused
_URL = re.compile(r"https?://[^\s<>()\[\]]+")


def search_reach(on: bool, caps: ModelCapabilities, service: bool) -> SearchReach:
    """How a turn on this route would search: natively, through the bot's search
    service (`service`: the operator named one), not at all, or off here."""
    if not on:
        return "off"
    if caps.searches_natively:
        return "native"
    return "service" if service else "none"


@dataclass
class AnswerSearch:
    """One answer's web search: its bound, the bot-side searches made (`log`), and the
    question whether the member may search once more (`allowed`: counts the search; it
    is told who pays the attempt running now)."""

    max_searches: int
    allowed: Callable[[str], Awaitable[bool]]
    left: Callable[[str], Awaitable[int | None]]
    log: SearchLog = field(default_factory=SearchLog)
    paid_by: str = "server"  # the credential source of the attempt running now
    refused: bool = False  # a search was refused by a bound: the answer is not fully grounded
    native_searches: int = 0  # searches the provider ran itself (counted after the answer)

    async def request_for(self, request: ChatRequest, capabilities: ModelCapabilities, paid_by: str) -> ChatRequest:
        """The attempt's request: native search within what is left, or the bot's tool."""
        self.paid_by = paid_by
        if not capabilities.searches_natively:
            return dataclasses.replace(request, web_search=None)
        left = await self.left(paid_by)
        allowed = self.max_searches if left is None else min(self.max_searches, left)
        self.refused = self.refused or allowed < 1
        tools = [tool for tool in request.tools if tool.name != WEB_SEARCH_TOOL]
        return dataclasses.replace(request, tools=tools,
                                   web_search=WebSearch(allowed) if allowed >= 1 else None)

    async def may_search(self) -> bool:
        """Asked by the `web_search` tool before it searches: within the answer's bound
        and the member's day (counted when True)."""
        if len(self.log.outcomes) >= self.max_searches or not await self.allowed(self.paid_by):
            self.refused = True
            self.log.add(SearchOutcome(query="", failure=LIMIT_FAILURE))
            return False
        return True

    @property
    def bot_searches(self) -> int:
        """Searches the bot's service ran for this answer (refusals are not searches)."""
        return sum(1 for o in self.log.outcomes if o.failure != LIMIT_FAILURE)

    @property
    def failed(self) -> bool:
        return any(o.failed and o.failure != LIMIT_FAILURE for o in self.log.outcomes)


def answer_sources(native: list[Source], searched: list[Source], text: str) -> list[Source]:
    """The pages the answer was grounded on, each once: the provider's citations in order,
    then the bot-side results the answer cites (in the order it cites them) — or, when it
    cites none, every result it was shown."""
    cited_urls = [m.group(0).rstrip(".,;:!?'\"") for m in _URL.finditer(text)]
    by_url = {source.url: source for source in searched}
    cited = [by_url[url] for url in cited_urls if url in by_url]
    return unique_sources([*native, *(cited or searched)])
