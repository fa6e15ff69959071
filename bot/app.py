"""The discord.py application: builds the bot, migrates the database, loads the cogs."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord.ext import commands
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot import migrate
from bot.answers import RunningAnswers
from bot.db.engine import create_engine, session_factory
from bot.observability import Observability, discord_http_trace
from bot.settings import Settings, resolve_encryption_keys
from bot.turn import Credentials, DatabaseCredentials, EnvironmentCredentials
from bot.vault import Vault
from providers.client_pool import ClientPool

log = logging.getLogger(__name__)

# Cogs are loaded by module path; each one registers its own listeners and commands.
COG_MODULES: tuple[str, ...] = (
    "bot.cogs.keys",
    "bot.cogs.models",
    "bot.cogs.admin",
    "bot.cogs.personal",
    "bot.cogs.limits",
    "bot.cogs.persona",
    "bot.cogs.access",
    "bot.cogs.chat",
)


def credentials_for(sessions: async_sessionmaker[AsyncSession] | None, vault: Vault | None,
                    settings: Settings) -> Credentials:
    """Where turns get routes and keys: the database when there is one with a vault to
    open its keys, else the operator's environment default alone."""
    if sessions is None or vault is None:
        return EnvironmentCredentials(settings)
    return DatabaseCredentials(sessions, vault, settings)


class LLMBot(commands.AutoShardedBot):
    """The bot; shared state lives in the database, so several processes can shard one app.

    Everything the cogs need is built once here and read as plain attributes:
    `settings`, `engine`, `sessions` (the session factory), `vault` (opens stored keys),
    `encryption_keys` (the Fernet keys the vault was built from), `credentials` (what a
    generation turn reads its route and keys from) and `clients` (the provider HTTP
    clients every turn shares, closed with the bot).
    """

    def __init__(self, settings: Settings, *, engine: AsyncEngine | None = None, **kwargs: Any) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        shard_kwargs: dict[str, Any] = {}
        if settings.SHARD_COUNT:
            shard_kwargs["shard_count"] = settings.SHARD_COUNT
            if settings.SHARD_IDS:
                shard_kwargs["shard_ids"] = settings.SHARD_IDS
        kwargs.setdefault("http_trace", discord_http_trace())  # REST requests and 429s, counted
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            **shard_kwargs,
            **kwargs,
        )
        self.settings: Settings = settings
        self.engine: AsyncEngine = engine or create_engine(settings.DATABASE_URL,
                                                           pool_size=settings.DATABASE_POOL_SIZE)
        self.sessions: async_sessionmaker[AsyncSession] = session_factory(self.engine)
        self.encryption_keys: list[bytes] = resolve_encryption_keys(settings)
        self.vault: Vault = Vault(self.encryption_keys)
        self.credentials: Credentials = credentials_for(self.sessions, self.vault, settings)
        self.answers = RunningAnswers()  # the answers streaming now (/stop, follow-ups, shutdown)
        self.clients = ClientPool()
        # /metrics and /healthz on METRICS_PORT, served on this bot's loop from setup_hook on.
        self.observability: Observability | None = (
            Observability(self, settings.METRICS_PORT) if settings.METRICS_PORT else None)

    async def setup_hook(self) -> None:
        if self.observability is not None:  # first: /healthz says 503 while migrations run
            await self.observability.start()
        await migrate.upgrade(self.engine)
        for module in COG_MODULES:
            await self.load_extension(module)
        from bot.translator import BabelTranslator

        # Command names/descriptions go out localized; nothing syncs unless asked.
        await self.tree.set_translator(BabelTranslator())
        if not self.settings.SHARD_IDS or 0 in self.settings.SHARD_IDS:  # one process syncs
            await self.tree.sync()
        log.info("setup complete: %d cog module(s)", len(COG_MODULES))

    async def close(self) -> None:
        await super().close()
        if self.observability is not None:
            await self.observability.stop()
        await self.clients.aclose()
        await self.engine.dispose()
