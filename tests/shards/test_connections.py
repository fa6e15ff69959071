"""Connections that fit: the default pool divided among SHARD_PROCESSES, the one start-up
line when all pools could exceed PostgreSQL's max_connections (on the real server, and
through the real `python -m bot`), and asyncpg's statement caches off behind PgBouncer."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from bot.db.engine import (
    CONNECTIONS_ACROSS_PROCESSES,
    check_connections,
    connections_warning,
    create_engine,
    engine_for,
    pool_size_for,
)
from bot.settings import load_settings
from tests.setup.test_startup_failures import fernet_key, free_port, operator_lines, run
from tests.support.env_postgres import POSTGRES_URL, SKIP_REASON, postgres_schema

needs_postgres = pytest.mark.skipif(not POSTGRES_URL, reason=SKIP_REASON)


@pytest.mark.parametrize(("processes", "expected"), [(None, 25), (1, 25), (2, 20), (4, 10), (8, 5), (16, 2), (64, 2)])
def test_the_default_pool_is_divided_among_the_processes(processes: int | None, expected: int) -> None:
    size = pool_size_for(500, None, processes)
    assert size == expected
    if processes and size > 2:  # kept and burst connections of all processes together stay within the total
        assert processes * 2 * size <= CONNECTIONS_ACROSS_PROCESSES


def test_the_operators_pool_size_and_a_small_default_are_kept() -> None:
    assert pool_size_for(500, 30, 8) == 30
    assert pool_size_for(100, None, 2) == 5  # already under the share


def test_the_bots_engine_follows_shard_processes() -> None:
    settings = load_settings(_env_file=None, DATABASE_URL="postgresql+asyncpg://bot@db:5432/bot",
                             SHARD_COUNT="8", SHARD_PROCESSES="4", PROCESS_INDEX="0")
    engine = engine_for(settings)
    assert (engine.sync_engine.pool.size(), engine.sync_engine.pool._max_overflow) == (10, 10)


def test_the_line_names_what_to_change() -> None:
    settings = load_settings(_env_file=None, SHARD_COUNT="8", SHARD_PROCESSES="8", PROCESS_INDEX="0",
                             DATABASE_POOL_SIZE="10")
    line = connections_warning(settings, 100)
    assert line is not None and "\n" not in line
    assert "8 process(es) × (pool 10 + 10 in a burst) = 160" in line and "max_connections=100" in line
    assert all(name in line for name in ("DATABASE_POOL_SIZE", "SHARD_PROCESSES", "DATABASE_PGBOUNCER")), line
    assert connections_warning(settings, 160) is None


async def server_max_connections() -> int:
    engine = create_engine(POSTGRES_URL)
    try:
        async with engine.connect() as conn:
            return int((await conn.exec_driver_sql("SHOW max_connections")).scalar_one())
    finally:
        await engine.dispose()


@needs_postgres
async def test_the_servers_max_connections_is_read() -> None:
    limit = await server_max_connections()
    processes = limit // 2 + 1  # pools of one connection (and one in a burst) each: one too many
    over = load_settings(_env_file=None, DATABASE_URL=POSTGRES_URL, DATABASE_POOL_SIZE="1",
                         SHARD_COUNT=str(processes), SHARD_PROCESSES=str(processes), PROCESS_INDEX="0")
    fits = load_settings(_env_file=None, DATABASE_URL=POSTGRES_URL, DATABASE_POOL_SIZE="1")
    behind_pgbouncer = over.model_copy(update={"DATABASE_PGBOUNCER": True})
    engine = create_engine(POSTGRES_URL)
    try:
        line = await check_connections(engine, over)
        assert line is not None and f"max_connections={limit}" in line, line
        assert await check_connections(engine, fits) is None
        assert await check_connections(engine, behind_pgbouncer) is None  # PgBouncer's pool is what counts
    finally:
        await engine.dispose()


@needs_postgres
async def test_python_m_bot_warns_once_and_goes_on(tmp_path: Path) -> None:
    limit = await server_max_connections()
    processes = limit // 2 + 1
    async with postgres_schema() as make:
        engine = make()
        async with engine.connect() as conn:
            schema = (await conn.execute(text("SELECT current_schema()"))).scalar_one()
        env = {"DATABASE_URL": f"{POSTGRES_URL}?search_path={schema}", "DISCORD_TOKEN": "x.y.z",
               "BOT_ENCRYPTION_KEY": fernet_key(), "DATABASE_POOL_SIZE": "1", "SHARD_COUNT": str(processes),
               "SHARD_PROCESSES": str(processes), "PROCESS_INDEX": "0",
               "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10"}
        result = run(tmp_path, env)
    [last] = operator_lines(result)  # Discord is out of reach: start-up went on past the warning
    assert "Cannot reach Discord" in last, last
    [warning] = [line for line in result.stderr.splitlines() if "max_connections" in line]
    assert "WARNING" in warning and f"= {2 * processes} may open" in warning, warning
    assert f"max_connections={limit}" in warning, warning


@needs_postgres
async def test_behind_pgbouncer_no_statement_is_cached() -> None:
    engine = create_engine(POSTGRES_URL, pgbouncer=True)
    try:
        for _ in range(3):
            async with engine.connect() as conn:
                assert (await conn.execute(text("SELECT :n + 1"), {"n": 41})).scalar_one() == 42
                fairy = await conn.get_raw_connection()
                adapter, driver = fairy.dbapi_connection, fairy.driver_connection
        assert adapter._prepared_statement_cache is None  # SQLAlchemy's asyncpg dialect caches nothing
        assert driver._stmt_cache.get_max_size() == 0  # nor does asyncpg
        assert adapter._prepared_statement_name_func() != adapter._prepared_statement_name_func()
    finally:
        await engine.dispose()
