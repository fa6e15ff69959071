"""`/stop`: end the answer streaming in this channel; what was already said stays.

The stop hook lives on the chat cog (`ChatCog.request_stop`), which owns the running
answers; this cog only turns a slash command into that call and says, ephemerally,
whether anything was running.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs.base import reply
from bot.translator import lstr


class ControlCog(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name=lstr("commands.stop.name"), description=lstr("commands.stop.description"))
    async def stop(self, interaction: discord.Interaction) -> None:
        chat = self.bot.get_cog("ChatCog")
        stopped = bool(chat is not None and interaction.channel_id is not None
                       and chat.request_stop(interaction.channel_id))  # type: ignore[attr-defined]
        await reply(interaction, "commands.stop.stopped" if stopped else "commands.stop.nothing")


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(ControlCog(bot))
