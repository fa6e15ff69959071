"""`/limits set|show` and `/usage` (Manage Server): what members may spend of the server's
keys and the operator's default, and what they spent."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.capabilities.images.usage import server_image_usage_lines
from bot.cogs.base import MANAGE_SERVER, ConfigCog, ManagerGroup, require_manager, send, text
from bot.edge.translator import localized, named
from bot.repo.usage import (
    MAX_IMAGES_PER_DAY,
    MAX_MESSAGES_PER_HOUR,
    MAX_SEARCHES_PER_DAY,
    MAX_TOKENS_PER_DAY,
    get_limits,
    prices_of,
    set_limits,
    usage_by,
)
from bot.usage.report import REPORT_DAYS, limit_lines, usage_lines

if TYPE_CHECKING:
    from bot.app import LLMBot

TOP_MEMBERS = 10
MessageLimit = app_commands.Range[int, 0, MAX_MESSAGES_PER_HOUR]
TokenLimit = app_commands.Range[int, 0, MAX_TOKENS_PER_DAY]
SearchLimit = app_commands.Range[int, 0, MAX_SEARCHES_PER_DAY]
ImageLimit = app_commands.Range[int, 0, MAX_IMAGES_PER_DAY]
BOUNDS = {"messages_per_hour": MAX_MESSAGES_PER_HOUR, "tokens_per_day": MAX_TOKENS_PER_DAY,
          "server_tokens_per_day": MAX_TOKENS_PER_DAY, "searches_per_day": MAX_SEARCHES_PER_DAY,
          "images_per_day": MAX_IMAGES_PER_DAY}


def today() -> date:
    return datetime.now(UTC).date()


class LimitsCog(ConfigCog):
    limits = ManagerGroup(
        **named("commands.limits"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )

    @localized(limits.command, "commands.limits.set")
    async def set_limits(self, interaction: discord.Interaction, messages_per_hour: MessageLimit | None = None,
                         tokens_per_day: TokenLimit | None = None,
                         server_tokens_per_day: TokenLimit | None = None,
                         searches_per_day: SearchLimit | None = None,
                         images_per_day: ImageLimit | None = None) -> None:
        """A value out of its bound (only a client other than Discord's sends one) is
        refused naming the option and the bound; nothing is stored."""
        given = {"messages_per_hour": messages_per_hour, "tokens_per_day": tokens_per_day,
                 "server_tokens_per_day": server_tokens_per_day, "searches_per_day": searches_per_day,
                 "images_per_day": images_per_day}
        for option, value in given.items():
            if value is not None and not 0 <= value <= BOUNDS[option]:
                await send(interaction, text(interaction, "commands.error.limit_out_of_range",
                                             option=text(interaction, f"commands.param.{option}.name"),
                                             limit=f"{BOUNDS[option]:,}"))
                return
        async with self.bot.sessions() as session, session.begin():
            stored = await set_limits(session, interaction.guild_id, messages_per_hour, tokens_per_day,
                                      server_tokens_per_day, searches_per_day, images_per_day)
        say = partial(text, interaction)
        await send(interaction, "\n".join([say("commands.reply.limits_saved"), *limit_lines(say, stored)]))

    @localized(limits.command, "commands.limits.show")
    async def show_limits(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session:
            stored = await get_limits(session, interaction.guild_id)
        await send(interaction, "\n".join(limit_lines(partial(text, interaction), stored)))

    @localized(app_commands.command, "commands.usage")
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    async def usage(self, interaction: discord.Interaction) -> None:
        """Not in a ManagerGroup (it is one command), so it checks the permission itself."""
        require_manager(interaction)
        guild, day = interaction.guild_id, today()
        async with self.bot.sessions() as session:
            today_rows = await usage_by(session, day, guild_id=guild)
            month = await usage_by(session, day - timedelta(days=REPORT_DAYS - 1), guild_id=guild)
            members = await usage_by(session, day - timedelta(days=REPORT_DAYS - 1), guild_id=guild, by="user",
                                     limit=TOP_MEMBERS)
            prices = await prices_of(session, guild)
            say = partial(text, interaction)
            images = await server_image_usage_lines(session, self.bot.settings, guild, day, REPORT_DAYS, say)
        lines = usage_lines(say, "commands.reply.usage_header", today_rows, month, members, prices) + images
        await send(interaction, "\n".join(lines))


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(LimitsCog(bot))
