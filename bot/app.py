"""The discord.py application: builds the bot, migrates the database, loads the cogs."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord.ext import commands
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot import migrate
from bot.capabilities.web_search.answer import search_reach
from bot.check.cooldown import Cooldown
from bot.db.engine import engine_for
from bot.edge.allowlist import ServingTree
from bot.edge.budget import budget_from_settings
from bot.edge.command_names import install, name_commands
from bot.encryption_key import resolve_encryption_keys
from bot.load.answers import RunningAnswers
from bot.load.config_cache import ConfigCache
from bot.load.identify import IdentifyGate, read_max_concurrency
from bot.load.observability import Observability, discord_http_trace
from bot.load.turn_queue import TurnQueue
from bot.load.write_behind import WriteBehind
from bot.readers.pool import PoolConfig, start_readers, stop_readers
from bot.repo.routes import environment_target
from bot.settings import Settings
from bot.turn import Credentials, DatabaseCredentials, EnvironmentCredentials
from bot.turn.access import ProviderAccess
from bot.vault import Vault
from providers.client_pool import ClientPool
from providers.log_safe import loggable

log = logging.getLogger(__name__)


def _NO_PREFIX(_bot: commands.Bot, _message: discord.Message) -> list[str]:  # noqa: N802 - a constant-like hook
    """No message is a prefix command."""
    return []

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
    "bot.capabilities.reminders.commands",
    "bot.cogs.servers",
    "bot.cogs.help",
    "bot.capabilities.privacy.commands",
    "bot.capabilities.memory.commands",
    "bot.capabilities.images.commands",
)


def search_unreachable(settings: Settings, access: ProviderAccess) -> str | None:
    """WEB_SEARCH=true whose default model neither searches natively nor has the bot's
    search service to call: said once at start, as nothing would ever search."""
    target = environment_target(settings)
    if not settings.WEB_SEARCH or target is None:
        return None
    if search_reach(True, access.capabilities(target), settings.SEARCH_BACKEND is not None) != "none":
        return None
    return (f"WEB_SEARCH=true, but {target.provider.value}/{loggable(target.model)} does not search the web "
            "by itself and SEARCH_BACKEND is not set: no answer will search; set SEARCH_BACKEND "
            "(searxng, brave or tavily) or a DEFAULT_TEXT_MODEL that searches")


def credentials_for(config: ConfigCache | None, vault: Vault | None, settings: Settings,
                    writes: WriteBehind | None = None) -> Credentials:
    """Where turns get routes and keys: the database (through its configuration cache,
    key health written by `writes`) when there is one with a vault to open its keys,
    else the operator's environment default alone."""
    if config is None or vault is None:
        return EnvironmentCredentials(settings)
    if writes is None:
        writes = WriteBehind(config.sessions, settings.DATABASE_WRITE_BATCH_MS / 1000)
    return DatabaseCredentials(config, vault, writes)


class LLMBot(commands.AutoShardedBot):
    """The bot; shared state lives in the database, so several processes can shard one app.

    Everything the cogs need is built once here and read as plain attributes:
    `settings`, `engine`, `sessions` (the session factory), `vault` (opens stored keys),
    `encryption_keys` (the Fernet keys the vault was built from), `credentials` (what a
    generation turn reads its route and keys from), `access` (how turns reach providers:
    the address policy and the provider HTTP clients every turn shares, closed with the bot), `config` (the configuration cache),
    `writes` (batched bookkeeping writes), `turns` (the admission queue) and
    `check_cooldown` (how often a route may be checked).
    """

    def __init__(self, settings: Settings, *, engine: AsyncEngine | None = None, **kwargs: Any) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        shard_kwargs: dict[str, Any] = {}
        if settings.SHARD_COUNT:
            shard_kwargs["shard_count"] = settings.SHARD_COUNT
            if settings.SHARD_IDS:
                shard_kwargs["shard_ids"] = settings.SHARD_IDS
        # Discord's global budget, this process's share (None: lifted for a shared REST proxy);
        # the trace makes every REST request wait for it and counts requests and 429s.
        self.discord_budget = budget_from_settings(settings)
        kwargs.setdefault("http_trace", discord_http_trace(self.discord_budget))
        super().__init__(
            command_prefix=_NO_PREFIX,
            help_command=None,  # no prefix commands: a mention is a question or nothing
            tree_cls=ServingTree,  # no command runs in a server the bot does not serve
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            **shard_kwargs,
            **kwargs,
        )
        self.settings: Settings = settings
        self.engine: AsyncEngine = engine or engine_for(settings)
        # On PostgreSQL every process's shards identify in turn per bucket (bot.load.identify);
        # a SQLite file serves one process, where discord.py's own spacing is enough.
        self.identify_gate: IdentifyGate | None = (
            IdentifyGate(self.engine, processes=settings.SHARD_PROCESSES or 1)
            if self.engine.dialect.name == "postgresql" else None)
        self.identify_concurrency: int | None = None  # max_concurrency, read at the first identify
        # Configuration read once per change (`bot.load.config_cache`); its sessions are the bot's.
        self.config = ConfigCache(self.engine, settings)
        self.sessions: async_sessionmaker[AsyncSession] = self.config.sessions
        # Key health and usage, written in batches off the answer's path.
        self.writes = WriteBehind(self.sessions, settings.DATABASE_WRITE_BATCH_MS / 1000)
        self.encryption_keys: list[bytes] = resolve_encryption_keys(settings)
        self.vault: Vault = Vault(self.encryption_keys)
        self.credentials: Credentials = credentials_for(self.config, self.vault, settings, self.writes)
        self.turns = TurnQueue(settings.MAX_CONCURRENT_ANSWERS)  # questions wait here in arrival order
        self.answers = RunningAnswers()  # the answers streaming now (/stop, follow-ups, shutdown)
        self.check_cooldown = Cooldown()  # one /model check per server, /personal check per member, a minute
        self.access = ProviderAccess.of(
            settings, ClientPool(settings.PROVIDER_HTTP_TRANSPORT, settings.PROVIDER_READ_INTERVAL_MS / 1000))
        # /metrics and /healthz on METRICS_PORT, served on this bot's loop from setup_hook on.
        self.observability: Observability | None = (
            Observability(self, settings.METRICS_PORT) if settings.METRICS_PORT else None)

    async def on_message(self, message: discord.Message, /) -> None:
        """No prefix commands: discord.py's default would run one for every mention (its
        built-in help answered even where the bot must stay silent). Questions are the
        chat cog's listener; slash commands arrive as interactions."""

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Wait for this shard's identify turn across processes (PostgreSQL), or discord.py's 5 s."""
        if self.identify_gate is None:
            await super().before_identify_hook(shard_id, initial=initial)
            return
        if self.identify_concurrency is None:
            self.identify_concurrency = await read_max_concurrency(self)
        await self.identify_gate.wait_turn(shard_id or 0, max_concurrency=self.identify_concurrency, initial=initial)

    async def setup_hook(self) -> None:
        if self.observability is not None:  # first: /healthz says 503 while migrations run
            await self.observability.start()
        await migrate.upgrade(self.engine)
        await start_readers(PoolConfig.of(self.settings))  # the document readers' processes
        self.config.start()  # other processes' settings changes, polled
        for module in COG_MODULES:
            await self.load_extension(module)
        from bot.edge.translator import BabelTranslator

        # Command names/descriptions go out localized; nothing syncs unless asked.
        await self.tree.set_translator(BabelTranslator())
        # One process syncs; the others ask Discord for the ids the hints' mentions need.
        await name_commands(self.tree, syncs=not self.settings.SHARD_IDS or 0 in self.settings.SHARD_IDS)
        if (line := search_unreachable(self.settings, self.access)) is not None:
            log.warning(line)
        log.info("setup complete: %d cog module(s)", len(COG_MODULES))

    async def close(self) -> None:
        await super().close()
        install({})  # this process's command ids go with it
        await stop_readers()  # a reader still on a document is killed: nothing waits for it
        if self.observability is not None:
            await self.observability.stop()
        await self.access.catalog.aclose()  # model lists still being read, before their clients go
        if self.access.clients is not None:
            await self.access.clients.aclose()
        await self.config.close()
        await self.writes.close()  # the last key health and usage, before the pool goes
        await self.engine.dispose()
