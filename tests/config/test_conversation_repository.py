"""The conversation tables on SQLite and PostgreSQL: answers recorded once (two shards
recording the same answer do not collide), the history depth bounded."""

from __future__ import annotations

import pytest

from bot.capabilities.declared import OutOfBounds
from bot.question.settings import CONVERSATION
from bot.repo.capability_settings import read_values, set_values
from bot.repo.conversation import (
    DEFAULT_HISTORY_MESSAGES,
    RecordedAnswer,
    answer_of,
    record_answers,
)
from bot.repo.routes import server_key_pool
from bot.settings import load_settings

GUILD = 4242


async def test_every_part_leads_to_the_whole_answer(sessions) -> None:
    async with sessions() as session, session.begin():
        await record_answers(session, [RecordedAnswer(100, 7, (201, 202, 203))])
        await record_answers(session, [RecordedAnswer(100, 7, (201, 202, 203))])  # a second writer changes nothing
        await record_answers(session, [RecordedAnswer(300, 7, ())])  # an answer with no message: nothing
    async with sessions() as session:
        whole = RecordedAnswer(100, 7, (201, 202, 203))
        assert [await answer_of(session, mid) for mid in (201, 202, 203)] == [whole] * 3
        assert await answer_of(session, 100) is None  # the question is not an answer


async def history_messages(session, guild_id) -> int:
    return (await read_values(session, CONVERSATION, guild_id))["history"]


async def test_history_depth_defaults_and_stays_in_bounds(sessions) -> None:
    async with sessions() as session, session.begin():
        assert await history_messages(session, GUILD) == DEFAULT_HISTORY_MESSAGES
        assert await history_messages(session, None) == DEFAULT_HISTORY_MESSAGES
        await set_values(session, GUILD, CONVERSATION, {"history": 3})
        await set_values(session, GUILD, CONVERSATION, {"history": 0})
    async with sessions() as session:
        assert await history_messages(session, GUILD) == 0
    for bad in (-1, 51):
        with pytest.raises(OutOfBounds, match="history"):
            async with sessions() as session, session.begin():
                await set_values(session, GUILD, CONVERSATION, {"history": bad})


async def test_a_keyless_default_is_only_the_operators_own_custom_target(sessions, vault) -> None:
    from datetime import UTC, datetime

    from bot.repo.servers import ModelTarget

    settings = load_settings(_env_file=None, DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="local",
                             DEFAULT_TEXT_BASE_URL="http://127.0.0.1:9/v1")
    now = datetime.now(UTC)
    async with sessions() as session:
        own = await server_key_pool(session, vault, settings, GUILD, ModelTarget("custom", "local",
                                                                                 "http://127.0.0.1:9/v1"), now)
        elsewhere = await server_key_pool(session, vault, settings, GUILD,
                                          ModelTarget("custom", "local", "http://example.com/v1"), now)
    assert [lease.secret for lease in own] == [""] and own[0].ref.kind == "keyless"
    assert list(elsewhere) == [] and elsewhere.configured is False
