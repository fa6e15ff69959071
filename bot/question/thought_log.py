"""Post a turn's reasoning to the server's thought-log channel, when one is configured.

The post itself (embed, footer `Provider: …`, `.txt` attachment for long reasoning) is
built by the pure `stream.thought_log.format_thought_log`; this module finds the channel,
checks who would read it, and sends it. Reasoning may quote what the model read, so it is
posted only where everyone who can see the thought-log channel can also see the channel
the question came from. A thought log is a side channel: any failure here is logged and
swallowed, never allowed to disturb the answer that was already delivered.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import discord

from bot.edge.sink import DiscordMessageSink
from bot.load.config_cache import ConfigSnapshot
from providers.i18n import t
from providers.types import ThoughtLogEntry
from stream.capture import CapturedBlock
from stream.sink import EmbedSpec, SentMessage, SinkError
from stream.thought_log import ThoughtLogLabels, ThoughtLogPost, format_thought_log

log = logging.getLogger(__name__)

ERROR_DETAIL_COLOR = 0xE67E22


@dataclass(frozen=True, slots=True)
class Reasoning:
    """One turn's reasoning: the thoughts, the blocks taken out of the text, who produced
    them, and whether its beginning was cut to keep it bounded."""

    thoughts: Sequence[ThoughtLogEntry]
    blocks: Sequence[CapturedBlock] = ()
    provider: str = "unknown"
    serving_provider: str | None = None
    cut: bool = False
    searches: Sequence[str] = ()  # the web searches the answer made (queries)


def configured_channel_id(config: ConfigSnapshot) -> int | None:
    """The thought-log channel the server stored, from the question's configuration read
    (None in a DM, when unset, or when it could not be read: the answer is on screen
    already, its reasoning is extra)."""
    server = config.server
    stored = server.facts.stored if server is not None and server.facts.guild_id is not None else None
    return stored.thought_log_channel_id if stored is not None else None


async def _resolve_channel(client: discord.Client, channel_id: int, guild_id: int | None) -> Any:
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


def audience_may_see(source: Any, log_channel: Any) -> bool:
    """Whoever can view `log_channel` can also view `source` (role by role, and for every
    member-specific overwrite); anything that cannot be checked is refused."""
    if source is log_channel or getattr(source, "id", None) == getattr(log_channel, "id", 0):
        return True
    if isinstance(source, discord.Thread):
        if source.is_private() or source.parent is None:
            return False  # a private thread's audience is its members: never widen it
        source = source.parent
    guild = getattr(source, "guild", None)
    if guild is None or not isinstance(source, discord.abc.GuildChannel):
        return False
    for role in guild.roles:
        if log_channel.permissions_for(role).view_channel and not source.permissions_for(role).view_channel:
            return False
    for channel in (source, log_channel):
        for target in channel.overwrites:
            if isinstance(target, discord.Role):
                continue
            member = target if isinstance(target, discord.Member) else guild.get_member(target.id)
            if member is None:
                return False
            if log_channel.permissions_for(member).view_channel and not source.permissions_for(member).view_channel:
                return False
    return True


async def post_thought_log(client: discord.Client, source: Any, channel_id: int | None, reasoning: Reasoning,
                           locale: Any = None) -> SentMessage | None:
    """Post `reasoning` of a question asked in `source` to `channel_id`; None when nothing
    was posted (no channel, no reasoning, another server's channel, a wider audience)."""
    guild_id = getattr(getattr(source, "guild", None), "id", None)
    if channel_id is None or guild_id is None:
        return None
    post = format_thought_log(
        reasoning.thoughts, reasoning.blocks, provider=reasoning.provider,
        serving_provider=reasoning.serving_provider, cut=reasoning.cut, searches=reasoning.searches,
        labels=ThoughtLogLabels.translated(lambda key: t(key, locale)),
    )
    if post is None:
        return None
    channel = await _resolve_channel(client, channel_id, guild_id)
    if channel is None:
        log.warning("thought-log channel %s is not a channel of guild %s", channel_id, guild_id)
        return None
    if not audience_may_see(source, channel):
        log.info("thought log not posted: channel %s is seen by members who cannot see channel %s",
                 channel_id, getattr(source, "id", None))
        return None
    return await _send(channel, client, post)


async def post_error_detail(client: discord.Client, guild_id: int, channel_id: int | None, detail: str,
                            locale: Any = None) -> SentMessage | None:
    """A custom endpoint's own error words, for the managers who chose the thought-log
    channel (the public error embed leaves them out)."""
    if channel_id is None:
        return None
    channel = await _resolve_channel(client, channel_id, guild_id)
    if channel is None:
        return None
    embed = EmbedSpec(t("chat.thought_log.error_detail_title", locale), detail, ERROR_DETAIL_COLOR)
    return await _send(channel, client, ThoughtLogPost(embed))


async def _send(channel: Any, client: discord.Client, post: Any) -> SentMessage | None:
    sink = DiscordMessageSink(channel, client=client)
    try:
        if post.attachment is not None:
            filename, data = post.attachment
            return await sink.send_file(filename, data, embed=post.embed)
        return await sink.send_embed(post.embed)
    except SinkError as exc:
        log.warning("could not post the thought log to channel %s: %s", getattr(channel, "id", None), exc)
        return None
