"""The same migrations on SQLite and PostgreSQL: up, down, up again, no drift, and data
carried where a migration moves it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from bot import migrate
from bot.capabilities.declarations import DECLARATIONS
from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.db.base import Base
from bot.db.engine import create_engine, session_factory
from bot.repo.capability_settings import read_server_values, set_values
from tests.support.env_postgres import POSTGRES_URL, postgres_schema


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request, tmp_path):
    if request.param == "postgresql":
        async with postgres_schema() as make:
            yield make()
        return
    eng = create_engine(f"sqlite+aiosqlite:///{tmp_path}/m.sqlite3")
    yield eng
    await eng.dispose()


async def _tables(engine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_up_down_up_and_no_drift(engine):
    await migrate.upgrade(engine)
    assert "servers" in await _tables(engine)
    await migrate._run(engine, command.downgrade, "base")
    assert await _tables(engine) <= {"alembic_version"}
    await migrate.upgrade(engine)

    async with engine.connect() as conn:
        diff = await conn.run_sync(
            lambda c: compare_metadata(MigrationContext.configure(c, opts={"compare_type": True}), Base.metadata)
        )
    assert diff == []


async def test_alembic_check_reports_clean(engine):
    await migrate.upgrade(engine)
    await migrate._run(engine, command.check)


# ---- shard processes starting together ---------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


async def _schema_url(engine) -> str:
    """The URL a separate process uses to reach the same throwaway schema."""
    async with engine.connect() as conn:
        schema = await conn.scalar(text("SELECT current_schema()"))
    return f"{POSTGRES_URL}?search_path={schema}"


def _migrate_processes(database_url: str, count: int, cwd: Path) -> list[subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BOT_ENCRYPTION_KEY")}
    env.update({"DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)})
    procs = [subprocess.Popen([sys.executable, "-m", "bot.migrate"], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(count)]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


async def _at_head(engine) -> bool:
    script = ScriptDirectory.from_config(migrate.alembic_config())
    async with engine.connect() as conn:
        current = await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_heads())
    return set(current) == set(script.get_heads())


async def test_shards_migrating_at_once_all_succeed(engine, tmp_path):
    """Several processes on a fresh database: one migrates, the others wait and find it done."""
    if engine.dialect.name == "postgresql":
        url = await _schema_url(engine)
    else:
        url = f"sqlite+aiosqlite:///{tmp_path}/fresh/bot.sqlite3"
        await engine.dispose()
        engine = create_engine(url)
    results = await asyncio.to_thread(_migrate_processes, url, 4, tmp_path)
    try:
        assert [r.returncode for r in results] == [0, 0, 0, 0], [r.stderr[-600:] for r in results]
        assert await _at_head(engine)
        assert "server_api_keys" in await _tables(engine)
    finally:
        await engine.dispose()


async def test_processes_creating_a_missing_schema_at_once_all_succeed(engine):
    """Shard processes started together on a schema that does not exist yet: one creates
    it, the others wait for its commit and find it (PostgreSQL refuses a second concurrent
    CREATE SCHEMA IF NOT EXISTS with a unique violation unless they take turns)."""
    if engine.dialect.name != "postgresql":
        pytest.skip("search_path is a PostgreSQL setting")
    schema = f"t_race_{uuid.uuid4().hex[:10]}"
    engines = [create_engine(f"{POSTGRES_URL}?search_path={schema}") for _ in range(6)]
    try:
        for _ in range(3):
            await asyncio.gather(*(migrate.ensure_schema(e) for e in engines))
            async with engine.begin() as conn:
                assert await conn.scalar(text("SELECT count(*) FROM pg_namespace WHERE nspname = :s"),
                                         {"s": schema}) == 1
                await conn.execute(text(f'DROP SCHEMA "{schema}"'))
            for each in engines:
                await each.dispose()  # a pooled connection would keep the dropped schema's state
    finally:
        for each in engines:
            await each.dispose()
        async with engine.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


async def test_search_path_in_the_url_selects_the_schema(engine):
    """An operator can keep the bot's tables in their own PostgreSQL schema."""
    if engine.dialect.name != "postgresql":
        pytest.skip("search_path is a PostgreSQL setting")
    own = create_engine(await _schema_url(engine))
    try:
        await migrate.upgrade(own)
        assert "servers" in await _tables(engine)  # the helper's engine sees them in its schema
    finally:
        await own.dispose()


async def test_upgrade_keeps_the_first_of_duplicate_fallbacks(engine):
    """Chains stored twice by concurrent adds before the unique constraint existed."""
    await migrate.upgrade(engine, "0002")
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO servers (guild_id) VALUES (1)"))
        for position, model in enumerate(["a", "b", "a", "c", "b"], start=1):
            await conn.execute(text("INSERT INTO model_fallbacks (guild_id, position, provider, model) "
                                    "VALUES (1, :p, 'google', :m)"), {"p": position, "m": model})
    await migrate.upgrade(engine)
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT position, model FROM model_fallbacks ORDER BY position"))).all()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, "b"), (4, "c")]


async def test_declared_settings_move_to_capability_settings_and_back(engine):
    """Web search's switch and number, the read-links switch and the conversation settings,
    stored as columns before 0012, read the same from capability_settings after it;
    downgrade puts them back, also for a server that set them only after the upgrade."""
    await migrate.upgrade(engine, "0011_identify")
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO servers (guild_id) VALUES (1), (2), (3)"))
        await conn.execute(text(
            "INSERT INTO server_capabilities (guild_id, verbatim_tool_calling_enabled, web_search_enabled, "
            "max_searches, read_links_enabled) VALUES (1, true, true, 7, false), (2, false, false, 3, true)"))
        await conn.execute(text("INSERT INTO conversation_settings (guild_id, history_messages, threads_enabled, "
                                "batch_seconds) VALUES (1, 4, true, 0.5), (3, 0, false, NULL)"))
    await migrate.upgrade(engine)
    sessions = session_factory(engine)
    async with sessions() as session:
        carried = {guild: (await read_server_values(session, DECLARATIONS, guild)).by_capability
                   for guild in (1, 2, 3)}
        verbatim = (await session.execute(text(
            "SELECT guild_id, verbatim_tool_calling_enabled FROM server_capabilities ORDER BY guild_id"))).all()
    defaults = {d.capability: d.defaults() for d in DECLARATIONS}
    assert carried[1] == {**defaults, "conversation": {"history": 4, "threads": True}, "listening": {"batch_seconds": 0.5},
                          "web_search": {**defaults["web_search"], "web_search": True, "max_searches": 7},
                          "reading": {"read_links": False}}
    assert carried[2] == defaults
    assert carried[3] == {**defaults, "conversation": {**defaults["conversation"], "history": 0}}
    assert [tuple(row) for row in verbatim] == [(1, True), (2, False)]
    async with sessions() as session, session.begin():
        await set_values(session, 3, WEB_SEARCH, {"web_search": True, "max_searches": 4})
    await migrate._run(engine, command.downgrade, "0011_identify")
    async with engine.connect() as conn:
        rows = (await conn.execute(text(
            "SELECT guild_id, verbatim_tool_calling_enabled, web_search_enabled, max_searches, read_links_enabled "
            "FROM server_capabilities ORDER BY guild_id"))).all()
        conversation = (await conn.execute(text(
            "SELECT guild_id, history_messages, threads_enabled, batch_seconds FROM conversation_settings "
            "ORDER BY guild_id"))).all()
    assert [tuple(row) for row in rows] == [(1, True, True, 7, False), (2, False, False, 3, True),
                                            (3, False, True, 4, True)]
    assert [tuple(row) for row in conversation] == [(1, 4, True, 0.5), (3, 0, False, None)]
    assert "capability_settings" not in await _tables(engine)


async def test_member_image_days_keep_their_price_on_the_upgrade(engine):
    """Before 0020 every image of a member's day was priced at IMAGE_PRICE: its days keep
    that (all their images count as the operator's); downgrade drops the count again."""
    await migrate.upgrade(engine, "0019_image_prices")
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO image_days (user_id, day, images) VALUES "
                                "(7, '2026-12-05', 3), (7, '2026-12-06', 1), (8, '2026-12-06', 0)"))
    await migrate.upgrade(engine)
    async with engine.connect() as conn:
        rows = (await conn.execute(text(
            "SELECT user_id, images, operator_images FROM image_days ORDER BY user_id, day"))).all()
    assert [tuple(row) for row in rows] == [(7, 3, 3), (7, 1, 1), (8, 0, 0)]
    await migrate._run(engine, command.downgrade, "0019_image_prices")
    async with engine.connect() as conn:
        columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("image_days")})
    assert columns == {"user_id", "day", "images"}
