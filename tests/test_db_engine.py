"""The database engine under concurrency: SQLite in write-ahead-log mode with a busy
timeout, and a connection pool sized from DATABASE_POOL_SIZE."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy import select, text

from bot import migrate, repo
from bot.db.engine import SQLITE_BUSY_TIMEOUT_MS, create_engine, session_factory
from bot.db.models import EnvironmentKeyHealth
from bot.repo.keys import KeyRef


async def test_a_new_sqlite_connection_runs_in_wal_mode_with_a_busy_timeout(tmp_path):
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path}/wal.sqlite3", pool_size=3)
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == SQLITE_BUSY_TIMEOUT_MS
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
        assert (engine.pool.size(), engine.pool._max_overflow) == (3, 3)
    finally:
        await engine.dispose()


async def test_an_in_memory_database_keeps_its_single_connection(tmp_path):
    engine = create_engine("sqlite+aiosqlite:///:memory:", pool_size=3)
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == SQLITE_BUSY_TIMEOUT_MS
            assert (await conn.execute(text("select 1"))).scalar() == 1
    finally:
        await engine.dispose()


async def test_fifty_concurrent_key_health_updates_on_one_file_all_land(tmp_path):
    """Answers ending together each write their key's health in their own transaction,
    while another turn holds a read open: in write-ahead-log mode the reader blocks no
    writer (with a rollback journal every commit would wait for it, then fail with
    "database is locked")."""
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path}/busy.sqlite3", pool_size=10)
    sessions = session_factory(engine)
    try:
        await migrate.upgrade(engine)
        ref = KeyRef("environment", "fingerprint-under-load")
        now = datetime.now(UTC)
        async with sessions() as session, session.begin():
            await repo.record_key_success(session, ref, now)
        reader = await engine.connect()  # a read transaction held open (the driver's own BEGIN)
        await reader.exec_driver_sql("BEGIN")
        assert (await reader.exec_driver_sql("SELECT errors FROM environment_key_health")).all() == [(0,)]

        async def one_failure(i: int) -> None:
            async with sessions() as session, session.begin():
                await repo.record_key_failure(session, ref, f"rate_limit_{i % 3}", now)

        async def one_success() -> None:
            async with sessions() as session, session.begin():
                await repo.record_key_success(session, ref, now)

        writes = asyncio.gather(*(one_failure(i) for i in range(50)),
                                *(one_success() for _ in range(10)), return_exceptions=True)
        results = await asyncio.wait_for(writes, SQLITE_BUSY_TIMEOUT_MS / 1000 / 3)  # the reader is still open
        assert [r for r in results if r is not None] == []
        # The reader still sees its snapshot; the writers did not wait for it.
        assert (await reader.exec_driver_sql("SELECT errors FROM environment_key_health")).all() == [(0,)]
        await reader.close()
        async with sessions() as session:
            row = (await session.scalars(select(EnvironmentKeyHealth))).one()
        assert (row.errors, row.successes) == (50, 11)
    finally:
        await engine.dispose()
