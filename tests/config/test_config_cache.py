"""The configuration cache across processes: each engine below stands for one bot process
(its own pool and its own cache) on one database — a SQLite file, and PostgreSQL when
TEST_POSTGRES_URL is set. A write applies at once in the process that made it and in
the other one after that one's poll; polls are called directly (nothing is timed)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from cryptography.fernet import Fernet
from sqlalchemy import select

from bot import repo
from bot.db.models import GenerationParams
from bot.load.config_cache import ConfigCache
from bot.repo.keys import KeyRef
from bot.repo.params import set_params
from bot.repo.versions import bump
from bot.settings import load_settings
from bot.vault import Vault
from tests.support.check_database_work import counted

GUILD, ALICE, BOB = 5001, 6001, 6002
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


async def two_processes(engine_factory) -> tuple[ConfigCache, ConfigCache]:
    settings = load_settings(_env_file=None)
    here, there = ConfigCache(engine_factory(), settings), ConfigCache(engine_factory(), settings)
    for cache in (here, there):
        await cache.poll()  # the first poll: the stamp each starts from
    return here, there


async def test_a_write_applies_here_at_once_and_there_after_its_poll(engine_factory):
    here, there = await two_processes(engine_factory)
    assert (await there.server(GUILD)).params.temperature is None
    assert (await here.server(GUILD)).params.temperature is None
    async with here.sessions() as session, session.begin():
        await set_params(session, GUILD, temperature=0.5)
    assert (await here.server(GUILD)).params.temperature == 0.5  # dropped at commit, read again
    assert (await there.server(GUILD)).params.temperature is None  # its copy, until it polls
    assert await there.poll() == 1
    assert (await there.server(GUILD)).params.temperature == 0.5
    assert await there.poll() == 0  # nothing new: one query, nothing dropped
    kept = await here.server(GUILD)
    assert await here.poll() == 0 and await here.server(GUILD) is kept  # its own write: dropped at commit only


async def test_members_own_settings_and_a_keys_rest_reach_the_other_process(engine_factory):
    here, there = await two_processes(engine_factory)
    vault = Vault([Fernet.generate_key()])
    async with here.sessions() as session, session.begin():
        await repo.add_server_key(session, vault, GUILD, "openai", "sk-shared-1234")
    await there.poll()
    [key] = (await there.server(GUILD)).keys
    assert not key.health.cooling(NOW) and (await there.personal(ALICE, GUILD)).info is None
    async with here.sessions() as session, session.begin():
        await repo.set_personal_model(session, ALICE, None, "openai", "gpt-own")
        await repo.record_key_failure(session, key.ref, "rate_limit", NOW, NOW + timedelta(minutes=5))
    assert await there.poll() == 2  # the member, and the server whose key rests
    assert (await there.personal(ALICE, GUILD)).info.model == "gpt-own"
    assert (await there.server(GUILD)).keys[0].health.cooling(NOW)


async def test_a_rolled_back_write_bumps_nothing(engine_factory):
    here, there = await two_processes(engine_factory)
    kept = await here.server(GUILD)
    try:
        async with here.sessions() as session, session.begin():
            await set_params(session, GUILD, temperature=1.5)
            raise RuntimeError("the command failed after writing")
    except RuntimeError:
        pass
    assert await here.server(GUILD) is kept  # nothing committed, nothing dropped
    assert await there.poll() == 0


async def test_a_success_without_a_rest_bumps_nothing(engine_factory):
    """Key successes are frequent: they must not make every process reload the server."""
    here, there = await two_processes(engine_factory)
    vault = Vault([Fernet.generate_key()])
    async with here.sessions() as session, session.begin():
        await repo.add_server_key(session, vault, GUILD, "openai", "sk-shared-5678")
    await there.poll()
    [key] = (await there.server(GUILD)).keys
    async with here.sessions() as session, session.begin():
        await repo.record_key_success(session, key.ref, NOW)
        await repo.record_key_failure(session, KeyRef("server", key.ref.ident), "transient", NOW)  # no rest
    assert await there.poll() == 0


async def test_a_load_that_saw_a_change_is_not_kept(engine_factory):
    here, _ = await two_processes(engine_factory)

    async def read_while_a_change_arrives(session):
        here.invalidate("server", GUILD)  # the poll drops GUILD while its old copy is being read
        return "old copy"

    assert await here._load(here._servers, GUILD, read_while_a_change_arrives) == "old copy"
    assert here._servers.get(GUILD) is None  # the next turn reads again


async def test_writes_racing_in_two_processes_are_never_missed_by_a_poll(engine_factory):
    """Stamps become visible in the order they were taken (the clock row's lock), so a
    poller that only asks for stamps above the last one it saw misses nothing."""
    here, there = await two_processes(engine_factory)
    watcher = ConfigCache(engine_factory(), here.settings)
    await watcher.poll()
    seen: set[int] = set()
    original = watcher.invalidate

    def remember(scope: str, scope_id: int) -> None:
        seen.add(scope_id)
        original(scope, scope_id)

    watcher.invalidate = remember  # type: ignore[method-assign]

    async def write(cache: ConfigCache, guild_id: int) -> None:
        async with cache.sessions() as session, session.begin():
            await bump(session, "server", guild_id)

    writes = asyncio.gather(*(write(here if n % 2 else there, 7000 + n) for n in range(20)))
    while not writes.done():
        await watcher.poll()
        await asyncio.sleep(0)
    await writes
    await watcher.poll()
    assert seen == {7000 + n for n in range(20)}


async def test_a_member_without_settings_costs_no_read_until_a_process_gives_them_some(engine_factory):
    """The first question of each new member used to read the database; members with no
    settings of their own (most) are known from the first poll, and one that gets settings
    in another process is read again after this one's poll."""
    here, there = await two_processes(engine_factory)
    async with there.sessions() as session, session.begin():
        await repo.set_personal_model(session, ALICE, None, "openai", "gpt-alice")
    await here.poll()
    with counted(here.sessions.kw["bind"]) as work:
        assert (await here.personal(BOB, GUILD)).info is None
    assert work.statements == []
    assert (await here.personal(ALICE, GUILD)).info.model == "gpt-alice"  # stamped: read
    async with there.sessions() as session, session.begin():
        await repo.set_personal_model(session, BOB, None, "openai", "gpt-bob")
    assert (await here.personal(BOB, GUILD)).info is None  # not polled yet
    await here.poll()
    assert (await here.personal(BOB, GUILD)).info.model == "gpt-bob"


async def test_members_configured_before_the_first_poll_are_read(engine_factory):
    settings = load_settings(_env_file=None)
    writer = ConfigCache(engine_factory(), settings)
    async with writer.sessions() as session, session.begin():
        await repo.set_personal_model(session, ALICE, None, "openai", "gpt-earlier")
    starting = ConfigCache(engine_factory(), settings)  # a process started after the write
    await starting.poll()
    assert (await starting.personal(ALICE, GUILD)).info.model == "gpt-earlier"


async def test_a_poll_is_one_statement_and_leaves_the_pool_transactional(engine_factory):
    """Every process polls every second: one SELECT on one checkout (on PostgreSQL outside
    any transaction). The connection goes back to the pool as it was: a session's write on
    it after the poll still rolls back."""
    here, there = await two_processes(engine_factory)
    engine = there.sessions.kw["bind"]
    async with here.sessions() as session, session.begin():
        await set_params(session, GUILD, temperature=0.5)
    with counted(engine) as work:
        assert await there.poll() == 1
    assert work.checkouts == 1 and len(work.statements) == 1 and work.statements[0].startswith("SELECT")
    assert (engine.pool.checkedout(), engine.pool.checkedin()) == (0, 1)  # the one connection, back
    async with there.sessions() as session:
        await set_params(session, GUILD, temperature=0.9)
        await session.rollback()
    async with there.sessions() as session:
        stored = select(GenerationParams.temperature).where(GenerationParams.guild_id == GUILD)
        assert await session.scalar(stored) == 0.5
