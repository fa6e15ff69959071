"""The thread switch in the database, on SQLite and PostgreSQL: off by default, set without
touching the history depth, and the history depth set without touching it."""

from __future__ import annotations

from bot.question.settings import CONVERSATION
from bot.repo.capability_settings import read_values, set_values
from bot.repo.conversation import DEFAULT_HISTORY_MESSAGES
from tests.config.conftest import engine, engine_factory, sessions  # noqa: F401

GUILD = 5151


async def threads_and_history(session, guild_id) -> tuple[bool, int]:
    values = await read_values(session, CONVERSATION, guild_id)
    return values["threads"], values["history"]


async def test_the_switch_defaults_off_and_lives_beside_the_history_depth(sessions) -> None:  # noqa: F811
    async with sessions() as session:
        assert (await threads_and_history(session, GUILD))[0] is False
        assert (await threads_and_history(session, None))[0] is False
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, CONVERSATION, {"threads": True})  # the history depth keeps its default
    async with sessions() as session:
        assert await threads_and_history(session, GUILD) == (True, DEFAULT_HISTORY_MESSAGES)
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, CONVERSATION, {"history": 4})
        await set_values(session, GUILD, CONVERSATION, {"threads": True})  # twice: an upsert, not a second row
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, CONVERSATION, {"threads": False})
    async with sessions() as session:
        assert await threads_and_history(session, GUILD) == (False, 4)
