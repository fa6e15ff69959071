"""`ImageData` on SQLite and PostgreSQL: the member's image days exported as plain JSON
values, another member's not; erased in the caller's transaction but for today's count
(the daily limit reads it), another member's kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot.capabilities.images.member_data import ImageData
from bot.capabilities.images.storage import images_on, take_image
from bot.capabilities.member_data import MemberData


async def test_export_and_erase_hold_only_the_members_days(sessions):
    data: MemberData = ImageData()
    alice, bob = 11, 22
    today = datetime.now(UTC).date()
    yesterday = today - timedelta(days=1)
    async with sessions() as session, session.begin():
        for day, on_operator in ((today, True), (yesterday, False), (today, False)):
            await take_image(session, alice, day, None, on_operator=on_operator)
        await take_image(session, bob, today, None, on_operator=True)
    async with sessions() as session:
        exported = await data.export(session, alice)
    json.dumps(exported)
    assert data.name == "image_days"
    assert exported == [{"day": yesterday.isoformat(), "images": 1, "on_operators_route": 0},
                        {"day": today.isoformat(), "images": 2, "on_operators_route": 1}]
    async with sessions() as session, session.begin():
        assert await data.erase(session, alice) == 1
    async with sessions() as session:
        assert await data.export(session, alice) == [{"day": today.isoformat(), "images": 2, "on_operators_route": 1}]
        assert await images_on(session, bob, today) == 1
