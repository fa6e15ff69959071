"""The capabilities' tests use the configuration tests' databases (SQLite always,
PostgreSQL when TEST_POSTGRES_URL is set) and the real LLMBot against the fake Discord."""

from tests.config.conftest import bot_factory, engine, engine_factory, sessions, vault  # noqa: F401
from tests.support.drive_discord_client import fake_discord  # noqa: F401
