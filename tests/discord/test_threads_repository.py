"""The thread switch in the database, on SQLite and PostgreSQL: off by default, set without
touching the history depth, and the history depth set without touching it."""

from __future__ import annotations

from bot.repo.conversation import (
    DEFAULT_HISTORY_MESSAGES,
    history_messages,
    set_history_messages,
    set_threads_enabled,
    threads_enabled,
)
from tests.config.conftest import engine, engine_factory, sessions  # noqa: F401

GUILD = 5151


async def test_the_switch_defaults_off_and_lives_beside_the_history_depth(sessions) -> None:  # noqa: F811
    async with sessions() as session:
        assert (await threads_enabled(session, GUILD), await threads_enabled(session, None)) == (False, False)
    async with sessions() as session, session.begin():
        await set_threads_enabled(session, GUILD, True)  # no row yet: the history depth keeps its default
    async with sessions() as session:
        assert (await threads_enabled(session, GUILD), await history_messages(session, GUILD)) == (
            True, DEFAULT_HISTORY_MESSAGES)
    async with sessions() as session, session.begin():
        await set_history_messages(session, GUILD, 4)
        await set_threads_enabled(session, GUILD, True)  # twice: an upsert, not a second row
    async with sessions() as session, session.begin():
        await set_threads_enabled(session, GUILD, False)
    async with sessions() as session:
        assert (await threads_enabled(session, GUILD), await history_messages(session, GUILD)) == (False, 4)
