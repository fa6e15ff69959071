"""A migrated database per test: SQLite file always, PostgreSQL (throwaway schema) when
TEST_POSTGRES_URL is set."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.vault import Vault
from tests.support.env_postgres import postgres_schema


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine_factory(request, tmp_path):
    """Makes engines on one migrated database; each engine stands for one bot process
    (its own connection pool, no shared Python state)."""
    if request.param == "postgresql":
        async with postgres_schema() as make:
            await migrate.upgrade(make())
            yield make
        return
    url = f"sqlite+aiosqlite:///{tmp_path}/config.sqlite3"
    made = []

    def make_sqlite():
        made.append(create_engine(url))
        return made[-1]

    await migrate.upgrade(make_sqlite())
    yield make_sqlite
    for eng in made:
        await eng.dispose()


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

from tests.support.drive_discord_client import fake_discord, llmbot_factory  # noqa: E402,F401


@pytest.fixture
def bot_factory(tmp_path):
    """Build LLMBot on a SQLite file in tmp_path with a fixed encryption key."""
    return llmbot_factory(tmp_path)
