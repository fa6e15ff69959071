"""A provider's own searches, counted in the member's day with the batched writes.

They are known only after the provider's response and they already ran (and were
paid), so they are counted whatever the limit — but only where a limit applies
(`bot.usage.limits.search_limit`) — and never on the answer's path: queued for
`bot.load.write_behind`, where writes of one member's day add up.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import ClassVar

from sqlalchemy.ext.asyncio import AsyncSession

from bot.repo.usage import Limits
from bot.repo.web_search import add_searches
from bot.usage.limits import search_limit


@dataclass(frozen=True)
class SearchesWrite:
    """`count` searches to add to one member's day in one server."""

    what: ClassVar[str] = "searches"
    guild_id: int
    user_id: int
    day: date
    count: int

    @property
    def merge_key(self) -> Hashable:
        return self.guild_id, self.user_id, self.day

    def plus(self, other: SearchesWrite) -> SearchesWrite:
        return SearchesWrite(self.guild_id, self.user_id, self.day, self.count + other.count)

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[SearchesWrite]) -> None:
        for item in items:
            await add_searches(session, item.guild_id, item.user_id, item.day, item.count)


def searches_counted(guild_id: int | None, user_id: int, limits: Limits, credential_source: str, count: int,
                     now: datetime | None = None) -> SearchesWrite | None:
    """The write counting `count` native searches, or None where no limit applies (a DM,
    the member's own key, a server without a searches limit) or nothing ran."""
    if guild_id is None or count <= 0 or search_limit(guild_id, limits, credential_source) is None:
        return None
    return SearchesWrite(guild_id, user_id, (now or datetime.now(UTC)).date(), count)
