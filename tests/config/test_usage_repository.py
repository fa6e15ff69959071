"""Usage counters and limits on the database itself: upserts that add, DM rows, and one
limit shared by two engines (two bot processes) on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.db.engine import session_factory
from bot.db.models import GenerationParams, UsageDay, UsageLimits
from bot.repo.common import RepositoryError
from bot.repo.params import get_params, set_params
from bot.repo.usage import (
    Limits,
    UsageAdd,
    UsageKey,
    add_usages,
    get_limits,
    limited_tokens,
    set_limits,
    usage_by,
)
from bot.usage.limits import reached
from bot.usage.tokens import TokenCounts

GUILD, ALICE, BOB = 1001, 2001, 2002
NOW = datetime(2026, 12, 2, 14, 25, tzinfo=UTC)
DAY = NOW.date()


async def add_usage(session, key: UsageKey, counts: TokenCounts) -> None:
    """One answer added to its day row."""
    await add_usages(session, [UsageAdd(key, counts)])


def key(user: int = ALICE, *, guild: int | None = GUILD, source: str = "server", day: date = DAY) -> UsageKey:
    return UsageKey(guild, user, "openai", "gpt-test", source, day)


async def test_a_day_row_adds_every_answer_and_dm_rows_have_their_own(sessions):
    async with sessions() as session, session.begin():
        await add_usage(session, key(), TokenCounts(10, 5, 2, 1))
        await add_usage(session, key(), TokenCounts(7, 3, 0, 4))
        await add_usage(session, key(guild=None), TokenCounts(1, 1))
        await add_usage(session, key(guild=None), TokenCounts(2, 2))
        await add_usage(session, key(), TokenCounts(8, 8, estimated=True))
    async with sessions() as session:
        rows = (await session.scalars(select(UsageDay).order_by(UsageDay.id))).all()
        mine = await usage_by(session, DAY, user_id=ALICE, by="all")
    assert [(r.guild_id, r.estimated, r.input_tokens, r.output_tokens, r.reasoning_tokens,
             r.cached_input_tokens, r.messages) for r in rows] == [
        (GUILD, False, 17, 8, 2, 5, 2), (None, False, 3, 3, 0, 0, 2), (GUILD, True, 8, 8, 0, 0, 1)]
    [total] = mine
    assert (total.input_tokens, total.output_tokens, total.messages, total.estimated) == (28, 19, 5, True)


async def test_limited_tokens_leave_out_the_members_own_key_and_other_days(sessions):
    async with sessions() as session, session.begin():
        await add_usage(session, key(), TokenCounts(100, 50))
        await add_usage(session, key(source="environment"), TokenCounts(10, 5))
        await add_usage(session, key(source="personal"), TokenCounts(1000, 1000))
        await add_usage(session, key(BOB), TokenCounts(20, 20))
        await add_usage(session, key(day=DAY - timedelta(days=1)), TokenCounts(500, 500))
    async with sessions() as session:
        assert await limited_tokens(session, GUILD, DAY, ALICE) == 165
        assert await limited_tokens(session, GUILD, DAY) == 205


async def test_negative_or_out_of_range_values_store_nothing(sessions):
    for bad in ({"messages_per_hour": -1}, {"tokens_per_day": -5}, {"server_tokens_per_day": -1}):
        with pytest.raises(RepositoryError) as refused:
            async with sessions() as session, session.begin():
                await set_limits(session, GUILD, **bad)
        assert refused.value.code == "bad_limit"
    for bad, code in (({"temperature": 2.5}, "bad_temperature"), ({"temperature": -0.1}, "bad_temperature"),
                      ({"max_output_tokens": 0}, "bad_max_output_tokens"), ({"reasoning": "max"}, "bad_reasoning")):
        with pytest.raises(RepositoryError) as refused:
            async with sessions() as session, session.begin():
                await set_params(session, GUILD, **bad)
        assert refused.value.code == code
    async with sessions() as session:
        assert (await session.scalars(select(UsageLimits))).all() == []
        assert (await session.scalars(select(GenerationParams))).all() == []


async def test_zero_removes_a_limit_and_none_keeps_it(sessions):
    async with sessions() as session, session.begin():
        await set_limits(session, GUILD, messages_per_hour=3, tokens_per_day=1000)
        await set_limits(session, GUILD, tokens_per_day=0, server_tokens_per_day=9000)
        await set_params(session, GUILD, temperature=0.5)
        await set_params(session, GUILD, reasoning="high")
    async with sessions() as session:
        limits = await get_limits(session, GUILD)
        params = await get_params(session, GUILD)
    assert (limits.messages_per_hour, limits.tokens_per_day, limits.server_tokens_per_day) == (3, None, 9000)
    assert (params.temperature, params.max_output_tokens, params.reasoning) == (0.5, None, "high")


async def test_two_processes_share_one_message_limit(engine_factory):
    """Two engines race for the member's last message of the hour: exactly one gets it."""
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    async with first() as session, session.begin():
        await set_limits(session, GUILD, messages_per_hour=3)
    outcomes = await asyncio.gather(*(reached(sessions, GUILD, ALICE, NOW, take=True)
                                      for sessions in (first, second) * 4))
    admitted = [hit for hit in outcomes if hit is None]
    refused = [hit for hit in outcomes if hit is not None]
    assert len(admitted) == 3 and len(refused) == 5
    assert {(hit.key, hit.limit, hit.resets) for hit in refused} == {
        ("chat.limit_messages", 3, datetime(2026, 12, 2, 15, 0, tzinfo=UTC))}
    # another member and the next hour have their own counts
    assert await reached(second, GUILD, BOB, NOW, take=True) is None
    assert await reached(first, GUILD, ALICE, NOW + timedelta(hours=1), take=True) is None


async def test_tokens_recorded_by_one_process_stop_the_other(engine_factory):
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    async with first() as session, session.begin():
        await set_limits(session, GUILD, messages_per_hour=10, tokens_per_day=100, server_tokens_per_day=250)
    assert await reached(second, GUILD, ALICE, NOW, take=True) is None
    async with first() as session, session.begin():
        await add_usage(session, key(), TokenCounts(60, 40))
    member = await reached(second, GUILD, ALICE, NOW, take=True)
    assert member is not None and (member.key, member.limit) == ("chat.limit_member_tokens", 100)
    assert member.resets == datetime(2026, 12, 3, tzinfo=UTC)
    assert await reached(second, GUILD, BOB, NOW, take=True) is None
    async with first() as session, session.begin():
        await add_usage(session, key(BOB), TokenCounts(100, 50))
    everyone = await reached(second, GUILD, BOB, NOW, take=True)
    assert everyone is not None and everyone.key == "chat.limit_server_tokens"
    # the refused turns gave their message back: only the two admitted ones were counted
    async with second() as session:
        from bot.repo.usage import messages_in_hour
        hour = NOW.replace(minute=0)
        assert await messages_in_hour(session, GUILD, ALICE, hour) == 1
        assert await messages_in_hour(session, GUILD, BOB, hour) == 1


async def test_a_burst_of_takes_counts_exactly_in_a_few_transactions(engine_factory):
    """200 questions at once (20 members, 10 each) against a bound of 4 per member: exactly 4
    of each are admitted, from a handful of transactions (one per answer made a burst queue
    on the database's write lock); a second process's takes meet the same counts."""
    made = session_factory(engine_factory())
    opened = []

    def counting():
        opened.append(1)
        return made()

    bound = Limits(messages_per_hour=4)
    members = [7000 + n for n in range(20)]
    outcomes = await asyncio.gather(*(reached(counting, GUILD, member, NOW, take=True, limits=bound)
                                      for member in members for _ in range(10)))
    admitted = [hit is None for hit in outcomes]
    assert sum(admitted) == 4 * len(members)
    for i in range(len(members)):
        assert admitted[i * 10:(i + 1) * 10].count(True) == 4
    assert len(opened) <= 10, len(opened)
    other = session_factory(engine_factory())
    assert await reached(other, GUILD, members[0], NOW, take=True, limits=bound) is not None
