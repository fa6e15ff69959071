"""The delivery claim on SQLite and PostgreSQL: one conditional UPDATE per claim, so of
two claimants one wins; a claim hides the reminder until its lease ends; a passing
failure keeps it for another try, until MAX_ATTEMPTS; a delivered one is never due again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.capabilities.reminders.storage import (
    MAX_ATTEMPTS,
    Target,
    add_reminder,
    claim,
    due_ids,
    next_due,
    pending_of,
    settle,
)
from bot.db.engine import session_factory

NOW = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)
LEASE = timedelta(seconds=60)


async def one_due(sessions) -> int:
    async with sessions() as session, session.begin():
        held = await add_reminder(session, Target(7, None, 70, "en"), "stretch", NOW - timedelta(seconds=5), NOW)
    assert held is not None
    return held.id


async def test_of_two_claimants_one_wins_and_the_lease_hides_it(engine_factory):
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    rid = await one_due(first)
    async with first() as session, session.begin():
        assert await claim(session, rid, "a", NOW, LEASE) is not None
    async with second() as session, session.begin():
        assert await claim(session, rid, "b", NOW, LEASE) is None  # held by "a"
        assert await due_ids(session, NOW + timedelta(seconds=30)) == []
        assert await next_due(session) == NOW + LEASE  # free again when the lease ends
        assert await due_ids(session, NOW + LEASE + timedelta(seconds=1)) == [rid]  # "a" died: its lease ran out
    async with first() as session, session.begin():
        await settle(session, rid, "a", "delivered", NOW)
    async with second() as session:
        assert await due_ids(session, NOW + timedelta(days=1)) == []
        assert await pending_of(session, 7) == [] and await next_due(session) is None


async def test_a_passing_failure_is_tried_again_until_max_attempts(sessions):
    rid = await one_due(sessions)
    at = NOW
    for attempt in range(1, MAX_ATTEMPTS + 1):
        async with sessions() as session, session.begin():
            assert await due_ids(session, at) == [rid], attempt
            assert await claim(session, rid, f"p{attempt}", at, LEASE) is not None
            await settle(session, rid, f"p{attempt}", "retry", at)
        at += LEASE + timedelta(seconds=1)
    async with sessions() as session:
        assert await due_ids(session, at) == []  # failed after MAX_ATTEMPTS sends
        assert await pending_of(session, 7) == []


async def test_only_the_holder_settles(sessions):
    rid = await one_due(sessions)
    async with sessions() as session, session.begin():
        await claim(session, rid, "a", NOW, LEASE)
        await settle(session, rid, "someone else", "delivered", NOW)
    async with sessions() as session:
        assert [h.id for h in await pending_of(session, 7)] == [rid]
