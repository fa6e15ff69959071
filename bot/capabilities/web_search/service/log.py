"""What the bot-side searches of one answer did: the queries, the pages, the failures.

The turn makes one `SearchLog` per answer and hands it to the tools in `ToolContext`;
the `web_search` tool adds one `SearchOutcome` per call. Afterwards the turn reads
`sources` (the answer's sources line), `queries` (the thought log) and `failed` (say the
answer was not grounded). Nothing here holds a key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.capabilities.web_search.service.results import SearchResult
from providers.types import Source


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """One `web_search` call: its query, what it found, and why it failed (None when not)."""

    query: str
    results: tuple[SearchResult, ...] = ()
    failure: str | None = None

    @property
    def failed(self) -> bool:
        return self.failure is not None

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(Source(url=r.url, title=r.title) for r in self.results)


@dataclass(slots=True)
class SearchLog:
    """The searches of one answer, in the order they ran."""

    outcomes: list[SearchOutcome] = field(default_factory=list)

    def add(self, outcome: SearchOutcome) -> None:
        self.outcomes.append(outcome)

    @property
    def queries(self) -> list[str]:
        return [o.query for o in self.outcomes]

    @property
    def sources(self) -> list[Source]:
        """Every page the model was shown, first appearance first, each URL once."""
        seen: dict[str, Source] = {}
        for outcome in self.outcomes:
            for source in outcome.sources:
                seen.setdefault(source.url, source)
        return list(seen.values())

    @property
    def failed(self) -> bool:
        """Some search of this answer failed (the model was told search was unavailable)."""
        return any(o.failed for o in self.outcomes)
