"""A server's web search switch, and the day buckets that count searches against a
member's daily limit.

The switch lives with the server's other capability switches (`ServerCapabilities`):
like verbatim tool calling, it changes what the model may do, is off until a manager
turns it on, and the turn reads it from the one configuration read of its question.

Searches are counted in `SearchDay` buckets, like messages in `MessageHour`: one atomic
upsert adds one only while the count is under the limit, so two processes (or two
answers of one member) can never both take the last search of the day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import SearchDay, ServerCapabilities
from bot.repo.common import ensure_server, insert_for
from bot.repo.versions import config_write

DEFAULT_MAX_SEARCHES = 3
MAX_SEARCHES = 10  # more per answer costs much and rarely adds a source the first ones missed


@dataclass(frozen=True)
class WebSearchSetting:
    """Whether the model may search the web in this server, and how often per answer."""

    enabled: bool = False
    max_searches: int = DEFAULT_MAX_SEARCHES


def max_searches_allowed(value: int) -> bool:
    return 1 <= value <= MAX_SEARCHES


def web_search_of(row: ServerCapabilities | None) -> WebSearchSetting:
    """The stored setting, else the default (off) for a server that never set it."""
    if row is None:
        return WebSearchSetting()
    return WebSearchSetting(bool(row.web_search_enabled), row.max_searches)


async def get_web_search(session: AsyncSession, guild_id: int | None) -> WebSearchSetting:
    """The server's setting (the default, off, in DMs: the operator's WEB_SEARCH applies there)."""
    if guild_id is None:
        return WebSearchSetting()
    return web_search_of(await session.get(ServerCapabilities, guild_id))


@config_write("server", "guild_id")
async def set_web_search(session: AsyncSession, guild_id: int, enabled: bool,
                         max_searches: int | None = None) -> WebSearchSetting:
    """Turn web search on or off; `max_searches` None keeps the stored number. A number
    out of bounds is the caller's bug (ValueError): the command refuses it in the
    member's language before it gets here."""
    if max_searches is not None and not max_searches_allowed(max_searches):
        raise ValueError(f"max searches out of bounds: {max_searches!r}")
    values: dict[str, object] = {"web_search_enabled": enabled}
    if max_searches is not None:
        values["max_searches"] = max_searches
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ServerCapabilities).values(guild_id=guild_id, **values)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"], set_=values))
    # populate_existing: the row as stored now, not a copy this session held before the upsert
    return web_search_of(await session.get(ServerCapabilities, guild_id, populate_existing=True))


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
