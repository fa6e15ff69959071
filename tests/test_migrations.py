"""The same migrations on SQLite and PostgreSQL: up, down, up again, and no drift."""

from __future__ import annotations

import os
import uuid

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from bot import migrate
from bot.db.base import Base
from bot.db.engine import create_engine

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL")


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request, tmp_path):
    if request.param == "sqlite":
        eng = create_engine(f"sqlite+aiosqlite:///{tmp_path}/m.sqlite3")
        yield eng
        await eng.dispose()
        return
    if not POSTGRES_URL:
        pytest.skip("TEST_POSTGRES_URL is unset (CI sets it when PostgreSQL answers on 127.0.0.1:5432)")
    admin = create_engine(POSTGRES_URL)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng = create_engine(POSTGRES_URL)
    eng = eng.execution_options(schema_translate_map=None)
    from sqlalchemy import event

    @event.listens_for(eng.sync_engine, "connect")
    def _search_path(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        cursor.execute(f'SET search_path TO "{schema}"')
        cursor.close()

    yield eng
    await eng.dispose()
    async with admin.begin() as conn:
        await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    await admin.dispose()


async def _tables(engine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_up_down_up_and_no_drift(engine):
    await migrate.upgrade(engine)
    assert "servers" in await _tables(engine)
    await migrate.downgrade(engine, "base")
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
