"""The daily image buckets on SQLite and PostgreSQL: one upsert takes an image only while
under the limit, so two processes drawing at once never pass it; a given-back image frees
its place, never below zero; no limit takes every time; each member and day is its own.
Of a member's images, those on the operator's route are counted apart (what IMAGE_PRICE
prices). A server's drawn images are counted per route and day for its /usage."""

from __future__ import annotations

import asyncio
from datetime import date

from bot.capabilities.images.storage import (
    DrawnImages,
    count_server_image,
    give_back_image,
    images_on,
    images_since,
    server_images_since,
    take_image,
)
from bot.db.engine import session_factory

DAY = date(2026, 12, 6)


async def take(sessions, member: int, limit: int | None, day: date = DAY) -> bool:
    async with sessions() as session, session.begin():
        return await take_image(session, member, day, limit, on_operator=True)


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
        await give_back_image(session, 7, DAY, on_operator=True)
        await give_back_image(session, 7, DAY, on_operator=True)  # never below zero
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


async def test_images_on_the_operators_route_are_counted_apart(engine_factory):
    """Taken and given back as drawn: on the operator's route or a server's own; a limit
    that refuses counts neither."""
    sessions = session_factory(engine_factory())
    async with sessions() as session, session.begin():
        for on_operator in (True, False, True, False):
            assert await take_image(session, 7, DAY, 5, on_operator=on_operator)
        await take_image(session, 7, date(2026, 12, 5), None, on_operator=True)
        await give_back_image(session, 7, DAY, on_operator=False)  # a server route's image that never came
        assert not await take_image(session, 7, DAY, 3, on_operator=True)  # the day is full at 3
    async with sessions() as session:
        assert await images_since(session, 7, DAY) == DrawnImages(images=3, on_operator=2)
        assert await images_since(session, 7, date(2026, 12, 1)) == DrawnImages(images=4, on_operator=3)
        assert await images_since(session, 8, DAY) == DrawnImages(0, 0)
    async with sessions() as session, session.begin():
        for _ in range(4):
            await give_back_image(session, 7, DAY, on_operator=True)  # never below zero
    async with sessions() as session:
        assert await images_since(session, 7, DAY) == DrawnImages(0, 0)
