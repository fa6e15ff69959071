"""`/remind set|list|cancel` and `/personal timezone`'s work, and the delivery task's life.

Anyone may set reminders for themselves, in a server channel where they and the bot may
send messages, or in a DM; each command reads and changes only the invoker's own rows.
Every reply is ephemeral and says in one line what was refused and why. Slash commands
cannot both run themselves and hold subcommands, so setting is `/remind set`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.capabilities.reminders.capability import SET_EVENT
from bot.capabilities.reminders.delivery import ReminderScheduler
from bot.capabilities.reminders.setting import ReminderRefused, member_zone, set_reminder
from bot.capabilities.reminders.storage import (
    MAX_ZONE_NAME_CHARS,
    Target,
    cancel,
    pending_of,
    set_zone,
)
from bot.capabilities.reminders.zones import shown_due, zone_choices, zone_named
from bot.cogs.base import ConfigCog, reply, send, text
from bot.edge.translator import localized, named

if TYPE_CHECKING:
    from bot.app import LLMBot

LIST_TEXT_CHARS = 80  # a reminder's text in /remind list, cut with an ellipsis


def may_deliver_here(interaction: discord.Interaction) -> bool:
    """In a server channel both the member and the bot must be able to send messages (a
    reminder must not carry a member's words where they may not write); a DM may always."""
    if interaction.guild_id is None:
        return True
    needed = "send_messages_in_threads" if isinstance(interaction.channel, discord.Thread) else "send_messages"
    return getattr(interaction.permissions, needed) and getattr(interaction.app_permissions, needed)


def short(words: str) -> str:
    """A reminder's text on one line of `/remind list`."""
    one_line = " ".join(words.split())
    return one_line if len(one_line) <= LIST_TEXT_CHARS else one_line[: LIST_TEXT_CHARS - 1] + "\u2026"


class RemindersCog(ConfigCog):
    """`/remind`, and this process's delivery task from the cog's load to its unload."""

    remind = app_commands.Group(**named("commands.remind"))

    def __init__(self, bot: LLMBot) -> None:
        super().__init__(bot)
        self.scheduler = ReminderScheduler(bot, bot.sessions)

    async def cog_load(self) -> None:
        self.scheduler.start()

    async def cog_unload(self) -> None:
        await self.scheduler.stop()

    @commands.Cog.listener(f"on_{SET_EVENT}")
    async def on_reminder_set(self) -> None:
        self.scheduler.wake()

    @localized(remind.command, "commands.remind.set", params={"words": "text"})
    async def set_(self, interaction: discord.Interaction, when: str, words: str) -> None:
        if not may_deliver_here(interaction):
            await reply(interaction, "commands.error.remind_cannot_send")
            return
        target = Target(interaction.user.id, interaction.guild_id, interaction.channel_id or 0,
                        str(interaction.locale))
        try:
            done = await set_reminder(self.bot.sessions, target, when, words)
        except ReminderRefused as refused:
            await reply(interaction, refused.key, **refused.params)
            return
        self.scheduler.wake()
        await reply(interaction, "commands.reply.remind_set", when=shown_due(done.held.due_at, done.zone,
                                                                             interaction.locale),
                    stamp=f"<t:{int(done.held.due_at.timestamp())}:R>")

    @localized(remind.command, "commands.remind.list")
    async def list_(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session:
            zone = await member_zone(session, interaction.user.id)
            pending = await pending_of(session, interaction.user.id)
        if not pending:
            await reply(interaction, "commands.reply.remind_list_empty")
            return
        lines = [text(interaction, "commands.reply.remind_list_header", count=len(pending), zone=zone.key)]
        lines += [text(interaction, "commands.reply.remind_list_line", number=n,
                       when=shown_due(held.due_at, zone, interaction.locale),
                       text=discord.utils.escape_mentions(short(held.text)))
                  for n, held in enumerate(pending, start=1)]
        await send(interaction, "\n".join(lines))

    @localized(remind.command, "commands.remind.cancel")
    async def cancel_(self, interaction: discord.Interaction, number: app_commands.Range[int, 1, 1000]) -> None:
        async with self.bot.sessions() as session, session.begin():
            zone = await member_zone(session, interaction.user.id)
            gone = await cancel(session, interaction.user.id, number)
        if gone is None:
            await reply(interaction, "commands.error.remind_no_such", number=number)
            return
        await reply(interaction, "commands.reply.remind_cancelled", number=number,
                    when=shown_due(gone.due_at, zone, interaction.locale))


async def set_time_zone(bot: LLMBot, interaction: discord.Interaction, name: str) -> None:
    """`/personal timezone`: store the member's zone, or refuse a name zoneinfo does not know."""
    zone = zone_named(name) if len(name) <= MAX_ZONE_NAME_CHARS else None
    if zone is None:
        await reply(interaction, "commands.error.zone_unknown", zone=discord.utils.escape_markdown(name[:64]))
        return
    async with bot.sessions() as session, session.begin():
        await set_zone(session, interaction.user.id, zone.key)
    await reply(interaction, "commands.reply.zone_set", zone=zone.key,
                now=shown_due(datetime.now(UTC), zone, interaction.locale))


def time_zone_choices(current: str) -> list[app_commands.Choice[str]]:
    """At most 25 IANA names matching what the member typed."""
    return [app_commands.Choice(name=zone, value=zone) for zone in zone_choices(current[:MAX_ZONE_NAME_CHARS])]


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(RemindersCog(bot))
