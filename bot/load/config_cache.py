"""The configuration an answer reads, kept in this process between settings writes.

A turn reads a server's controls, persona, history depth, generation settings, limits,
model chain and key pool, and the member's own configuration. Read from the database
every time, that was about thirty statements per answer; here each server (and member)
is read once, at once, and kept until its settings change (a member's memories too,
`bot.capabilities.memory`, dropped by the member's stamp):

- a write by this process drops its copy when the write commits (the repository's
  `@config_write` functions note what they bumped on the session; `StampedSession`
  acts on it after the commit);
- a write by another process sharing the database (a shard) bumps the scope's stamp in
  the same transaction (`bot.repo.versions`); every `CONFIG_POLL_SECONDS` one query asks
  for the stamps above the last one seen and drops those copies. Every process pays that
  query every second, so it goes on a bare connection, outside any transaction on
  PostgreSQL (no BEGIN and ROLLBACK round trips), not through an ORM session.

What is kept is what the database holds at rest: keys stay encrypted (the vault opens
one when a turn leases it) and nothing here is logged. A key's rest set by a failure
bumps its scope too, so a pool resting in another shard is seen after the next poll.
Copies are bounded (least recently used go first). When the database cannot be read, a
kept copy still answers; a copy being loaded when a change arrives is not kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from sqlalchemy import event, select
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from bot.capabilities.declarations import DECLARATIONS
from bot.capabilities.declared import ServerValues, server_values
from bot.capabilities.images.route_storage import ImageTarget, image_target_of
from bot.capabilities.listening.storage import listen_channels, servers_listening
from bot.capabilities.mcp_tools.storage import switches_of
from bot.capabilities.memory.storage import (
    NO_MEMORIES,
    MemberMemories,
    member_memories,
    server_facts_of,
)
from bot.db.models import Persona
from bot.load.metrics import database_error
from bot.repo.capability_settings import read_server_values
from bot.repo.controls import GuildControls, read_controls
from bot.repo.keys import KeyHealth, StoredKey, environment_key_health, server_key_rows
from bot.repo.params import Params, get_params
from bot.repo.personal import PersonalEntry, effective_personal_entry, members_with_settings
from bot.repo.routes import ServerFacts, server_facts
from bot.repo.usage import Limits, get_limits
from bot.repo.versions import BUMPED, Change, changed_since, latest_stamp
from bot.settings import Settings

log = logging.getLogger(__name__)

CACHE_INFO = "config_cache"  # session.info key: the cache this session's commits invalidate
MAX_SERVERS = 10_000
MAX_MEMBERS = 50_000
# Members whose memories are kept: up to 100 facts of 500 characters each (~50 KB at
# worst), so far fewer than MAX_MEMBERS; one beyond is read again, in one statement.
MAX_REMEMBERING = 2_000
NO_PERSONAL = PersonalEntry(None)  # a member without settings of their own
T = TypeVar("T")


@dataclass(frozen=True)
class ServerConfig:
    """Everything the answer path reads of one server (of a DM: `facts.guild_id` None)."""

    facts: ServerFacts
    controls: GuildControls | None = None
    personas: Mapping[int | None, str] = field(default_factory=dict)
    params: Params = Params()
    limits: Limits = Limits()
    keys: tuple[StoredKey, ...] = ()
    # Where every member message is a question without a mention: channel id -> the
    # minimum gap between answers there, in seconds.
    listen_channels: Mapping[int, float] = field(default_factory=dict)
    # Every setting the capabilities declare, checked (a DM: every default).
    settings: ServerValues = field(default_factory=lambda: server_values(DECLARATIONS))
    # The facts its managers set for every member's requests (`/memory server add`).
    memory_facts: tuple[str, ...] = ()
    # What its managers turned off (or on again) of the operator's MCP servers and their
    # tools: (server, tool or "") -> on (`bot.capabilities.mcp_tools`).
    mcp_switches: Mapping[tuple[str, str], bool] = field(default_factory=dict)
    # Its own image route (`/model image set`), else None: the operator's.
    image_route: ImageTarget | None = None

    def persona(self, channel_id: int) -> str | None:
        """The channel's persona, else the server's, else None."""
        return self.personas.get(channel_id, self.personas.get(None))

    @property
    def history_messages(self) -> int:
        """How many earlier messages of a reply chain are sent as history."""
        return int(self.settings.value("conversation", "history"))

    @property
    def threads_enabled(self) -> bool:
        """Whether a mention in a text channel opens a thread for its answer."""
        return bool(self.settings.value("conversation", "threads"))

    @property
    def batch_seconds(self) -> float:
        """Back-to-back messages of one member within this window become one question (0: off)."""
        return float(self.settings.value("listening", "batch_seconds"))

    @property
    def web_search(self) -> bool:
        """Whether the model may search the web here (a server that never set it: off; a
        DM: not applicable, the operator's WEB_SEARCH is)."""
        return bool(self.settings.value("web_search", "web_search"))

    @property
    def max_searches(self) -> int:
        """At most how many searches one answer runs here."""
        return int(self.settings.value("web_search", "max_searches"))

    @property
    def read_links(self) -> bool:
        """Whether the bot reads the links in questions here (a server that never set it:
        on; a DM: on). The operator's READ_LINKS, off, turns it off everywhere."""
        return bool(self.settings.value("reading", "read_links"))


async def load_server(session: AsyncSession, settings: Settings, guild_id: int | None) -> ServerConfig:
    facts = await server_facts(session, settings, guild_id)
    if guild_id is None:
        return ServerConfig(facts)
    personas = dict((await session.execute(select(Persona.channel_id, Persona.body)
                                           .where(Persona.guild_id == guild_id))).all())
    return ServerConfig(facts, await read_controls(session, guild_id), personas, await get_params(session, guild_id),
                        await get_limits(session, guild_id), tuple(await server_key_rows(session, guild_id)),
                        listen_channels=await listen_channels(session, guild_id),
                        settings=await read_server_values(session, DECLARATIONS, guild_id),
                        memory_facts=await server_facts_of(session, guild_id),
                        mcp_switches=await switches_of(session, guild_id),
                        image_route=await image_target_of(session, guild_id))


class StampedSession(Session):
    """A session whose committed settings writes drop this process's cached copies."""


@event.listens_for(StampedSession, "after_commit")
def _drop_committed(session: Session) -> None:
    cache = session.info.get(CACHE_INFO)
    for scope, scope_id, stamp in session.info.pop(BUMPED, ()):
        if cache is not None:
            cache.invalidate(scope, scope_id)
            cache.committed_here(stamp)


@event.listens_for(StampedSession, "after_rollback")
def _forget_rolled_back(session: Session) -> None:
    session.info.pop(BUMPED, None)


class Lru:
    """A bounded map, least recently used first out."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        return None

    def put(self, key: Hashable, value: Any) -> None:
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.bound:
            self.items.popitem(last=False)


class ConfigCache:
    """Cached configuration (see the module docstring); `sessions` is the bot's session
    factory, whose commits invalidate this cache."""

    def __init__(self, engine: AsyncEngine, settings: Settings) -> None:
        self.settings = settings
        self._engine = engine
        self.sessions = async_sessionmaker(engine, expire_on_commit=False, sync_session_class=StampedSession,
                                           info={CACHE_INFO: self})
        self._servers = Lru(MAX_SERVERS)
        self._members = Lru(MAX_MEMBERS)  # (user id, guild id) -> PersonalEntry
        self._memories = Lru(MAX_REMEMBERING)  # user id -> MemberMemories (`bot.capabilities.memory`)
        self._environment: list[KeyHealth] | None = None
        self._loading: dict[tuple[int, Hashable], asyncio.Task[Any]] = {}
        self._epoch = 0  # counts invalidations: a load that saw one is not kept
        self._seen: int | None = None  # the last stamp the poll saw
        self._own: set[int] = set()  # stamps this process committed (dropped already at commit)
        self._poller: asyncio.Task[None] | None = None
        self._poll_failing = False
        # Members known to have settings of their own (None until the first poll): most
        # members have none, and their first question then costs no read. A member
        # stamped since (here or by another process) joins the set; none ever leaves it.
        self._configured: set[int] | None = None
        # Servers with a listen channel (None until the first poll), the same way: a
        # message that does not address the bot elsewhere needs no server read. A server
        # stamped since joins the set (it may have begun to listen); none ever leaves it.
        self._listening: set[int] | None = None

    async def server(self, guild_id: int | None) -> ServerConfig:
        """The server's configuration; raises SQLAlchemyError/OSError when it is not kept
        and the database cannot be read."""
        kept = self._servers.get(guild_id)
        if kept is not None:
            return kept
        return await self._load(self._servers, guild_id, lambda s: load_server(s, self.settings, guild_id))

    def may_listen(self, guild_id: int) -> bool:
        """Whether the server may have a listen channel (unknown before the first poll: it may)."""
        return self._listening is None or guild_id in self._listening

    async def personal(self, user_id: int, guild_id: int | None) -> PersonalEntry:
        """The member's effective own configuration here (the server's row, else global)."""
        if self._configured is not None and user_id not in self._configured:
            return NO_PERSONAL
        kept = self._members.get((user_id, guild_id))
        if kept is not None:
            return kept
        return await self._load(self._members, (user_id, guild_id),
                                lambda s: effective_personal_entry(s, user_id, guild_id))

    async def memories(self, user_id: int) -> MemberMemories:
        """The member's memory switch and memories (a member without settings of their
        own has memory off: no read)."""
        if self._configured is not None and user_id not in self._configured:
            return NO_MEMORIES
        kept = self._memories.get(user_id)
        if kept is not None:
            return kept
        return await self._load(self._memories, user_id, lambda s: member_memories(s, user_id))

    async def environment_health(self) -> list[KeyHealth]:
        """Health of the operator's DEFAULT_TEXT_API_KEYS, in their configured order."""
        if self._environment is not None:
            return self._environment
        epoch = self._epoch
        async with self.sessions() as session:
            health = await environment_key_health(session, self.settings.default_text_api_keys())
        if epoch == self._epoch:
            self._environment = health
        return health

    async def _load(self, store: Lru, key: Hashable, read: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """One read for every turn asking at once, in its own task (a turn interrupted
        while waiting does not cancel the others' read); kept unless invalidated meanwhile."""
        slot = (id(store), key)
        task = self._loading.get(slot)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._read_and_keep(store, key, read))
            self._loading[slot] = task
            task.add_done_callback(lambda done: self._loaded(slot, done))
        return await asyncio.shield(task)

    async def _read_and_keep(self, store: Lru, key: Hashable, read: Callable[[AsyncSession], Awaitable[T]]) -> T:
        epoch = self._epoch
        async with self.sessions() as session:
            value = await read(session)
        if epoch == self._epoch:
            store.put(key, value)
        return value

    def _loaded(self, slot: tuple[int, Hashable], done: asyncio.Task[Any]) -> None:
        self._loading.pop(slot, None)
        if not done.cancelled():
            done.exception()  # retrieved: the turns that asked raise it themselves

    def invalidate(self, scope: str, scope_id: int) -> None:
        """Drop what `scope`/`scope_id` covers (called at commit and by the poll)."""
        self._epoch += 1
        if scope == "server":
            self._servers.items.pop(scope_id, None)
            if self._listening is not None:
                self._listening.add(scope_id)
        elif scope == "member":
            if self._configured is not None:
                self._configured.add(scope_id)
            for key in [k for k in self._members.items if k[0] == scope_id]:
                del self._members.items[key]
            self._memories.items.pop(scope_id, None)
        elif scope == "environment":
            self._environment = None

    def clear(self) -> None:
        self._epoch += 1
        self._servers.items.clear()
        self._members.items.clear()
        self._memories.items.clear()
        self._environment = None

    async def poll(self) -> int:
        """Drop what other processes changed since the last poll; how many scopes.

        A scope's row holds its latest stamp only: when that stamp is one this process
        committed, the latest change is ours and was dropped at commit already."""
        if self._seen is None:  # first poll: anything kept so far may predate it
            async with self.sessions() as session:
                self._seen = await latest_stamp(session)  # before the members: a later write is polled
                self._configured = await members_with_settings(session)
                self._listening = await servers_listening(session)
            self.clear()
            return 0
        changes = await self._changes_since(self._seen)
        dropped = 0
        for change in changes:
            self._seen = max(self._seen, change.version)
            if change.version in self._own:  # our own write, its copies dropped at its commit
                continue
            self.invalidate(change.scope, change.scope_id)
            dropped += 1
        self._own = {stamp for stamp in self._own if stamp > self._seen}
        return dropped

    async def _changes_since(self, stamp: int) -> list[Change]:
        """The poll's one query: a single SELECT needs no transaction of its own."""
        async with self._engine.connect() as connection:
            if self._engine.dialect.name == "postgresql":
                connection = await connection.execution_options(isolation_level="AUTOCOMMIT")
            return await changed_since(connection, stamp)

    def committed_here(self, stamp: int) -> None:
        """A write of this process committed `stamp`: its poll need not drop it again."""
        if len(self._own) < MAX_MEMBERS:
            self._own.add(stamp)

    async def _poll_forever(self, interval: float) -> None:
        while True:
            try:
                await self.poll()
                if self._poll_failing:
                    log.info("configuration stamps readable again")
                self._poll_failing = False
            except (SQLAlchemyError, OSError) as exc:
                database_error("config_poll")
                if not self._poll_failing:  # once per outage, not every second
                    log.error("configuration stamps unreadable (%s): cached settings kept", type(exc).__name__)
                self._poll_failing = True
            await asyncio.sleep(interval)

    def start(self) -> None:
        """Poll every CONFIG_POLL_SECONDS until `close`."""
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll_forever(self.settings.CONFIG_POLL_SECONDS),
                                               name="config-poll")

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
            self._poller = None


# How one question's configuration read went: "ok"; "none" (the bot has no database: the
# operator's environment default serves); "busy" or "down" (the database did not answer).
ReadState = Literal["ok", "none", "busy", "down"]


def is_busy(cause: BaseException) -> bool:
    """A pool timeout, or SQLite's "database is locked": the database is there, only busy."""
    if isinstance(cause, PoolTimeout):
        return True
    return isinstance(cause, OperationalError) and "locked" in str(cause.orig).lower()


@dataclass(frozen=True)
class ConfigSnapshot:
    """Everything one question reads of the configuration, read once when it arrives.

    `server` is the server's (or, in a DM, the bot-wide) configuration and `personal` the
    asker's own; when the database did not answer (`state` busy or down) `server` is the
    copy this process kept, if any, so the server's access rules may still be known."""

    state: ReadState
    server: ServerConfig | None = None
    personal: PersonalEntry = NO_PERSONAL

    @property
    def readable(self) -> bool:
        return self.state in ("ok", "none")


async def read_config(cache: ConfigCache | None, guild_id: int | None, user_id: int,
                      server: ServerConfig | None = None) -> ConfigSnapshot:
    """The one configuration read of a question, with its one failure policy: a database
    that does not answer is logged and counted here and reported in `state`, never raised.
    `server`: the server's settings read a moment ago for this message (not read again)."""
    if cache is None:
        return ConfigSnapshot("none")
    try:
        server = server if server is not None else await cache.server(guild_id)
        personal = await cache.personal(user_id, guild_id)
    except (SQLAlchemyError, OSError) as exc:
        database_error("turn")
        log.error("the database cannot be read (%s): the question's configuration is unknown", type(exc).__name__)
        return ConfigSnapshot("busy" if is_busy(exc) else "down", server)
    return ConfigSnapshot("ok", server, personal)
