"""A server's switch for reading the links in its members' questions.

It lives with the server's other capability switches (`ServerCapabilities`) because it
changes what an answer may reach: with it on, the bot fetches the pages a member named.
Unlike web search it costs no provider anything and only follows links a member wrote,
so it is on until a manager turns it off; the operator's READ_LINKS can still turn it off
for every server. The turn reads it from the one configuration read of its question.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import ServerCapabilities
from bot.repo.common import ensure_server, insert_for
from bot.repo.versions import config_write


def read_links_of(row: ServerCapabilities | None) -> bool:
    """The stored switch, else the default (on) for a server that never set it."""
    return True if row is None else bool(row.read_links_enabled)


async def get_read_links(session: AsyncSession, guild_id: int | None) -> bool:
    """The server's switch (on in DMs: only the operator's READ_LINKS applies there)."""
    if guild_id is None:
        return True
    return read_links_of(await session.get(ServerCapabilities, guild_id))


@config_write("server", "guild_id")
async def set_read_links(session: AsyncSession, guild_id: int, enabled: bool) -> bool:
    """Turn reading links on or off for the server; the switch as stored now."""
    await ensure_server(session, guild_id)
    values = {"read_links_enabled": enabled}
    stmt = insert_for(session, ServerCapabilities).values(guild_id=guild_id, **values)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"], set_=values))
    # populate_existing: the row as stored now, not a copy this session held before the upsert
    return read_links_of(await session.get(ServerCapabilities, guild_id, populate_existing=True))
