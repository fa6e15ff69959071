"""A migrated database per test: SQLite file always, PostgreSQL (throwaway schema) when
TEST_POSTGRES_URL is set."""

from __future__ import annotations

import os
import uuid

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.vault import Vault

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL")


def _schema_engine(schema: str):
    # A server setting, not a SET in a "connect" hook: a SET runs inside the driver's
    # implicit transaction and is undone by the pool's rollback when a read-only session
    # returns the connection.
    return create_async_engine(POSTGRES_URL, pool_pre_ping=True,
                               connect_args={"server_settings": {"search_path": schema}})


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine_factory(request, tmp_path):
    """Makes engines on one migrated database; each engine stands for one bot process
    (its own connection pool, no shared Python state)."""
    made = []
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/config.sqlite3"

        def make():
            made.append(create_engine(url))
            return made[-1]
        drop = None
    else:
        if not POSTGRES_URL:
            pytest.skip("TEST_POSTGRES_URL is unset (CI sets it when PostgreSQL answers on 127.0.0.1:5432)")
        admin = create_engine(POSTGRES_URL)
        schema = f"t_{uuid.uuid4().hex[:12]}"
        async with admin.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{schema}"'))

        def make():
            made.append(_schema_engine(schema))
            return made[-1]

        async def drop():
            async with admin.begin() as conn:
                await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            await admin.dispose()
    await migrate.upgrade(make())
    yield make
    for eng in made:
        await eng.dispose()
    if drop is not None:
        await drop()


@pytest.fixture
def engine(engine_factory):
    return engine_factory()


@pytest.fixture
def sessions(engine):
    return session_factory(engine)


@pytest.fixture
def vault():
    return Vault([Fernet.generate_key()])


# ---- a real LLMBot against the fake Discord -------------------------------------------

from tests.fakes.discord_harness import fake_discord  # noqa: E402,F401


@pytest.fixture
def bot_factory(tmp_path):
    """Build LLMBot on a SQLite file in tmp_path with a fixed encryption key."""
    from bot.app import LLMBot
    from bot.settings import load_settings
    from tests.fakes.discord_harness import fast_ready_kwargs

    key = Fernet.generate_key().decode()

    def make(**env):
        values = {"DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/bot.sqlite3",
                  "BOT_ENCRYPTION_KEY": key, **env}
        return LLMBot(load_settings(_env_file=None, **values), **fast_ready_kwargs())

    make.database_dir = tmp_path
    make.encryption_key = key
    return make
