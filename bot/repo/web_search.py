"""The day buckets that count web searches against a member's daily limit (the
server's switch and searches per answer are declared settings:
`bot.capabilities.web_search.settings`).

Searches are counted in `SearchDay` buckets, like messages in `MessageHour`: one atomic
upsert adds one only while the count is under the limit, so two processes (or two
answers of one member) can never both take the last search of the day.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import SearchDay
from bot.repo.common import insert_for


async def take_search(session: AsyncSession, guild_id: int, user_id: int, day: date, limit: int) -> bool:
    """Count one search in the member's day if that stays within `limit`; False (nothing
    counted) when the day is full. One statement, so two processes cannot both take the last."""
    if limit <= 0:
        return False
    stmt = insert_for(session, SearchDay).values(guild_id=guild_id, user_id=user_id, day=day, searches=1)
    stmt = stmt.on_conflict_do_update(
        index_elements=["guild_id", "user_id", "day"], set_={"searches": SearchDay.searches + 1},
        where=SearchDay.searches < limit,
    ).returning(SearchDay.searches)
    return (await session.execute(stmt)).first() is not None


async def add_searches(session: AsyncSession, guild_id: int, user_id: int, day: date, count: int) -> None:
    """Count searches that already ran (a provider's own, reported after its response),
    whatever the limit: they were paid for."""
    if count <= 0:
        return
    stmt = insert_for(session, SearchDay).values(guild_id=guild_id, user_id=user_id, day=day, searches=count)
    await session.execute(stmt.on_conflict_do_update(
        index_elements=["guild_id", "user_id", "day"], set_={"searches": SearchDay.searches + count}))


async def searches_on(session: AsyncSession, guild_id: int, user_id: int, day: date) -> int:
    """Searches counted for the member in this server on `day`."""
    count = await session.scalar(select(SearchDay.searches).where(
        SearchDay.guild_id == guild_id, SearchDay.user_id == user_id, SearchDay.day == day))
    return int(count or 0)
