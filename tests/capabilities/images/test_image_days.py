"""The daily image buckets on SQLite and PostgreSQL: one upsert takes an image only while
under the limit, so two processes drawing at once never pass it; a given-back image frees
its place, never below zero; no limit takes every time; each member and day is its own."""

from __future__ import annotations

import asyncio
from datetime import date

from bot.capabilities.images.storage import give_back_image, images_on, take_image
from bot.db.engine import session_factory

DAY = date(2026, 12, 6)


async def take(sessions, member: int, limit: int | None, day: date = DAY) -> bool:
    async with sessions() as session, session.begin():
        return await take_image(session, member, day, limit)


async def test_two_processes_never_pass_the_limit(engine_factory):
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    taken = await asyncio.gather(*(take(sessions, 7, 3) for sessions in (first, second) * 4))
    assert sum(taken) == 3
    async with first() as session:
        assert await images_on(session, 7, DAY) == 3


async def test_give_back_frees_a_place_and_other_days_and_members_are_their_own(engine_factory):
    sessions = session_factory(engine_factory())
    assert await take(sessions, 7, 1) and not await take(sessions, 7, 1)
    assert await take(sessions, 8, 1) and await take(sessions, 7, 1, date(2026, 12, 7))
    async with sessions() as session, session.begin():
        await give_back_image(session, 7, DAY)
        await give_back_image(session, 7, DAY)  # never below zero
        assert await images_on(session, 7, DAY) == 0
    assert await take(sessions, 7, 1)
    assert not await take(sessions, 9, 0)  # a limit of 0 takes nothing
    assert all([await take(sessions, 10, None) for _ in range(5)])  # no limit
