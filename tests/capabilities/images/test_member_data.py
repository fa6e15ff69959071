"""`ImageData` on SQLite and PostgreSQL: the member's image days exported as plain JSON
values, another member's not; erased in the caller's transaction, another member's kept."""

from __future__ import annotations

import json
from datetime import date

from bot.capabilities.images.member_data import ImageData
from bot.capabilities.images.storage import images_on, take_image
from bot.capabilities.member_data import MemberData


async def test_export_and_erase_hold_only_the_members_days(sessions):
    data: MemberData = ImageData()
    alice, bob = 11, 22
    async with sessions() as session, session.begin():
        for day in (date(2026, 12, 6), date(2026, 12, 5), date(2026, 12, 6)):
            await take_image(session, alice, day, None)
        await take_image(session, bob, date(2026, 12, 6), None)
    async with sessions() as session:
        exported = await data.export(session, alice)
    json.dumps(exported)
    assert data.name == "image_days"
    assert exported == [{"day": "2026-12-05", "images": 1}, {"day": "2026-12-06", "images": 2}]
    async with sessions() as session, session.begin():
        assert await data.erase(session, alice) == 2
    async with sessions() as session:
        assert await data.export(session, alice) == []
        assert await images_on(session, bob, date(2026, 12, 6)) == 1
