"""Reading the channel's recent messages for a catch-up: up to 200, oldest first.

discord.py pages the history 100 messages a request (`channel.history`), so 200 cost two
requests. System messages (joins, pins, thread starts) are left out; the bot's own
answers are kept, labelled as the bot's (a catch-up that left them out would miss what
members were told); other bots' messages are kept under their names like members'.
The bot's small notice lines (`-# …`) are not conversation and are left out.
"""

from __future__ import annotations

import discord

from bot.capabilities.catchup.transcript import Said, jump_link
from bot.question.history import CONVERSATION_TYPES, NOTICE_PREFIX

MAX_MESSAGES = 200
DEFAULT_MESSAGES = 50


class Unreadable(Exception):
    """Discord refused the bot the channel's history."""


def said(message: discord.Message, bot_id: int) -> Said | None:
    """One message as the transcript holds it; None for what is not conversation."""
    if message.type not in CONVERSATION_TYPES:
        return None
    by_bot = message.author.id == bot_id
    if by_bot and (not message.content or message.content.startswith(NOTICE_PREFIX)):
        return None
    files = tuple(attachment.filename for attachment in message.attachments)
    if not message.content and not files:
        return None  # an embed or a sticker only: nothing to read
    guild_id = message.guild.id if message.guild is not None else None
    return Said(message.author.display_name, message.content, jump_link(guild_id, message.channel.id, message.id),
                by_bot, files)


async def recent(channel: discord.abc.Messageable, count: int, bot_id: int) -> list[Said]:
    """The last `count` messages of `channel` (at most 200), oldest first, as read."""
    try:
        found = [m async for m in channel.history(limit=max(1, min(count, MAX_MESSAGES)))]
    except discord.Forbidden as exc:
        raise Unreadable from exc
    found.reverse()
    return [s for m in found if (s := said(m, bot_id)) is not None]
