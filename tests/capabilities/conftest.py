"""The capabilities' tests use the configuration tests' databases (SQLite always,
PostgreSQL when TEST_POSTGRES_URL is set), the real LLMBot against the fake Discord, and
the turn tests' bot on the replay provider."""

from tests.config.conftest import bot_factory, engine, engine_factory, sessions, vault  # noqa: F401
from tests.support.drive_discord_client import fake_discord  # noqa: F401
from tests.turn.conftest import turn_bot  # noqa: F401
