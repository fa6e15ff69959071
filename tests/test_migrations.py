"""The same migrations on SQLite and PostgreSQL: up, down, up again, and no drift."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from bot import migrate
from bot.db.base import Base
from bot.db.engine import create_engine
from tests.databases import postgres_schema


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
