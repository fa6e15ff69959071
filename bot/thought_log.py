"""Post a turn's reasoning to the server's thought-log channel, when one is configured.

The post itself (embed, footer `Provider: …`, `.txt` attachment for long reasoning) is
built by the pure `stream.thought_log.format_thought_log`; this module only finds the
channel and sends it. A thought log is a side channel: any failure here is logged and
swallowed, never allowed to disturb the answer that was already delivered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import discord
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.discord_sink import DiscordMessageSink
from bot.repo import get_server_settings
from providers.i18n import t
from providers.types import ThoughtLogEntry
from stream.capture import CapturedBlock
from stream.sink import SentMessage, SinkError
from stream.thought_log import ThoughtLogLabels, format_thought_log

log = logging.getLogger(__name__)


async def configured_channel_id(sessions: async_sessionmaker[AsyncSession], guild_id: int | None) -> int | None:
    """The thought-log channel the server stored (None outside a guild or when unset)."""
    if guild_id is None:
        return None
    async with sessions() as session:
        return (await get_server_settings(session, guild_id)).thought_log_channel_id


async def _resolve_channel(client: discord.Client, channel_id: int,
                           guild_id: int | None) -> discord.abc.Messageable | None:
    channel: Any = client.get_channel(channel_id)
    if channel is None:
        try:
            channel = await client.fetch_channel(channel_id)
        except discord.HTTPException:
            return None
    # Reasoning of one server must never land in another server's channel.
    if getattr(getattr(channel, "guild", None), "id", None) != guild_id:
        return None
    return channel if isinstance(channel, discord.abc.Messageable) else None


async def post_thought_log(
    client: discord.Client,
    channel_id: int | None,
    *,
    guild_id: int | None,
    thoughts: Iterable[ThoughtLogEntry],
    blocks: Iterable[CapturedBlock] = (),
    provider: str,
    serving_provider: str | None = None,
    locale: Any = None,
) -> SentMessage | None:
    """Post the reasoning to `channel_id` (a channel of `guild_id`); None when nothing was posted."""
    if channel_id is None or guild_id is None:
        return None
    post = format_thought_log(
        thoughts, blocks, provider=provider, serving_provider=serving_provider,
        labels=ThoughtLogLabels.translated(lambda key: t(key, locale)),
    )
    if post is None:
        return None
    channel = await _resolve_channel(client, channel_id, guild_id)
    if channel is None:
        log.warning("thought-log channel %s is not a channel of guild %s", channel_id, guild_id)
        return None
    sink = DiscordMessageSink(channel, client=client)
    try:
        if post.attachment is not None:
            filename, data = post.attachment
            return await sink.send_file(filename, data, embed=post.embed)
        return await sink.send_embed(post.embed)
    except SinkError as exc:
        log.warning("could not post the thought log to channel %s: %s", channel_id, exc)
        return None
