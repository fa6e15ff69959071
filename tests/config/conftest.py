"""A migrated database per test: SQLite file always, PostgreSQL (throwaway schema) when
TEST_POSTGRES_URL is set."""

from __future__ import annotations

import os
import uuid

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import event, text

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.vault import Vault

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL")


async def _postgres_engine():
    admin = create_engine(POSTGRES_URL)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng = create_engine(POSTGRES_URL)

    @event.listens_for(eng.sync_engine, "connect")
    def _search_path(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        cursor.execute(f'SET search_path TO "{schema}"')
        cursor.close()

    async def drop():
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()

    return eng, drop


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request, tmp_path):
    if request.param == "sqlite":
        eng, drop = create_engine(f"sqlite+aiosqlite:///{tmp_path}/config.sqlite3"), None
    else:
        if not POSTGRES_URL:
            pytest.skip("TEST_POSTGRES_URL is unset (CI sets it when PostgreSQL answers on 127.0.0.1:5432)")
        eng, drop = await _postgres_engine()
    await migrate.upgrade(eng)
    yield eng
    await eng.dispose()
    if drop is not None:
        await drop()


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
