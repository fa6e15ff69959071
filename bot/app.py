"""The discord.py application: builds the bot, migrates the database, loads the cogs."""

from __future__ import annotations

import logging

import discord
from discord.ext import commands
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.settings import Settings, resolve_encryption_keys

log = logging.getLogger(__name__)

# Cogs are loaded by module path; each one registers its own listeners and commands.
COG_MODULES: tuple[str, ...] = (
    "bot.cogs.keys",
    "bot.cogs.models",
    "bot.cogs.admin",
    "bot.cogs.personal",
    "bot.cogs.chat",
    "bot.cogs.control",
)


class LLMBot(commands.AutoShardedBot):
    """The bot; shared state lives in the database, so several processes can shard one app."""

    def __init__(self, settings: Settings, *, engine: AsyncEngine | None = None, **kwargs) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        shard_kwargs: dict = {}
        if settings.SHARD_COUNT:
            shard_kwargs["shard_count"] = settings.SHARD_COUNT
            if settings.SHARD_IDS:
                shard_kwargs["shard_ids"] = settings.SHARD_IDS
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            **shard_kwargs,
            **kwargs,
        )
        self.settings = settings
        self.engine = engine or create_engine(settings.DATABASE_URL)
        self.sessions = session_factory(self.engine)
        self.encryption_keys = resolve_encryption_keys(settings)

    async def setup_hook(self) -> None:
        await migrate.upgrade(self.engine)
        for module in COG_MODULES:
            await self.load_extension(module)
        from bot.translator import BabelTranslator

        # Command names/descriptions go out localized; nothing syncs unless asked (notes §3.2).
        await self.tree.set_translator(BabelTranslator())
        if not self.settings.SHARD_IDS or 0 in self.settings.SHARD_IDS:  # one process syncs
            await self.tree.sync()
        log.info("setup complete: %d cog module(s)", len(COG_MODULES))

    async def close(self) -> None:
        await super().close()
        await self.engine.dispose()
