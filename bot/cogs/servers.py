"""The servers the bot is in: with ALLOWED_SERVERS set, it leaves every other one it
finds at start or is added to (one log line each); at start it warns once when the
application is public and no allowlist is set (`bot.edge.allowlist`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from bot.edge.allowlist import public_risk, serves
from providers.log_safe import loggable

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)


class ServersCog(commands.Cog):
    """Leaves the servers the operator did not allow (see the module docstring)."""

    def __init__(self, bot: LLMBot) -> None:
        self.bot = bot
        self.allowed = bot.settings.ALLOWED_SERVERS
        self._leaving: set[int] = set()

    async def cog_load(self) -> None:
        application = self.bot.application  # read at login, before the cogs load
        risk = public_risk(application is not None and application.bot_public, self.allowed)
        if risk is not None:
            log.warning(risk)

    @commands.Cog.listener()
    async def on_ready(self) -> None:
        log.info("ready: %s in %d server(s)", loggable(str(self.bot.user)), len(self.bot.guilds))

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        await self._leave_unless_allowed(guild)

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        await self._leave_unless_allowed(guild)

    async def _leave_unless_allowed(self, guild: discord.Guild) -> None:
        if serves(self.allowed, guild.id) or guild.id in self._leaving:
            return
        self._leaving.add(guild.id)
        log.warning("leaving server %s (%d): it is not in ALLOWED_SERVERS", loggable(guild.name), guild.id)
        try:
            await guild.leave()
        except discord.HTTPException as exc:
            self._leaving.discard(guild.id)  # tried again when the server is next seen
            log.warning("could not leave server %d (%s); its messages and commands are ignored", guild.id,
                        loggable(str(exc)))


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(ServersCog(bot))
