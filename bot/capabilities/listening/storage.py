"""Listen channels: where every member message is a question without a mention.

Each channel keeps its own minimum gap between answers, so a busy channel is answered
now and then instead of after every line. A server has at most MAX_LISTEN_CHANNELS:
each one turns every message there into a paid request. Writes upsert under the
server's lock, so two shard processes cannot both take the last place.
"""

from __future__ import annotations

import math
from typing import Literal

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import ListenChannel
from bot.repo.common import insert_for, lock_server
from bot.repo.versions import config_write

DEFAULT_LISTEN_GAP = 5.0
MAX_LISTEN_GAP = 300.0
MAX_LISTEN_CHANNELS = 10
ListenResult = Literal["added", "updated", "full"]


def listen_gap_allowed(value: float) -> bool:
    """Within 0 and MAX_LISTEN_GAP seconds; NaN and infinity are not."""
    return math.isfinite(value) and 0 <= value <= MAX_LISTEN_GAP


@config_write("server", "guild_id")
async def set_listen_channel(session: AsyncSession, guild_id: int, channel_id: int,
                             gap: float = DEFAULT_LISTEN_GAP) -> ListenResult:
    """Listen in a channel, or change its gap: "added", "updated", or "full" (nothing
    written: the server listens in MAX_LISTEN_CHANNELS already). A gap out of bounds is
    the caller's bug (ValueError): the command refuses it in the member's language."""
    if not listen_gap_allowed(gap):
        raise ValueError(f"listen gap out of bounds: {gap!r}")
    await lock_server(session, guild_id)
    known = await listen_channels(session, guild_id)
    if channel_id not in known and len(known) >= MAX_LISTEN_CHANNELS:
        return "full"
    stmt = insert_for(session, ListenChannel).values(guild_id=guild_id, channel_id=channel_id,
                                                     gap_seconds=float(gap))
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id", "channel_id"],
                                                     set_={"gap_seconds": float(gap)}))
    return "updated" if channel_id in known else "added"


@config_write("server", "guild_id")
async def remove_listen_channel(session: AsyncSession, guild_id: int, channel_id: int) -> bool:
    """Stop listening in a channel; False when the bot was not listening there."""
    result = await session.execute(delete(ListenChannel).where(ListenChannel.guild_id == guild_id,
                                                               ListenChannel.channel_id == channel_id))
    return bool(result.rowcount)


async def listen_channels(session: AsyncSession, guild_id: int) -> dict[int, float]:
    """The server's listen channels: channel id -> gap seconds, in channel order."""
    rows = await session.execute(select(ListenChannel.channel_id, ListenChannel.gap_seconds)
                                 .where(ListenChannel.guild_id == guild_id).order_by(ListenChannel.channel_id))
    return {channel_id: float(gap) for channel_id, gap in rows.all()}



async def servers_listening(session: AsyncSession) -> set[int]:
    """The servers with a listen channel: only there may a message that does not address
    the bot be a question."""
    return set((await session.scalars(select(ListenChannel.guild_id).distinct())).all())
