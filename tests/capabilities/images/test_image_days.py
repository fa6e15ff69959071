"""The daily image buckets on SQLite and PostgreSQL: one upsert takes an image only while
under the limit, so two processes drawing at once never pass it; a given-back image frees
its place, never below zero; no limit takes every time; each member and day is its own.
A server's drawn images are counted per route and day for its /usage."""

from __future__ import annotations

import asyncio
from datetime import date

from bot.capabilities.images.storage import (
    count_server_image,
    give_back_image,
    images_on,
    server_images_since,
    take_image,
)
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


async def test_a_servers_images_are_counted_per_route_and_day(engine_factory):
    sessions = session_factory(engine_factory())
    own, operators = ("custom", "gpt-image-1", "server"), ("openai", "gpt-image-1", "operator")
    async with sessions() as session, session.begin():
        for route, day in ((own, DAY), (own, DAY), (operators, DAY), (own, date(2026, 12, 5))):
            await count_server_image(session, 42, day, route)
        await count_server_image(session, 43, DAY, own)  # another server's
    async with sessions() as session:
        assert await server_images_since(session, 42, DAY) == {own: 2, operators: 1}
        assert await server_images_since(session, 42, date(2026, 12, 1)) == {own: 3, operators: 1}
        assert await server_images_since(session, 44, DAY) == {}
