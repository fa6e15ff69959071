"""`ReminderData` on SQLite and PostgreSQL: the member's reminders (every state) and time
zone exported as plain JSON values, another member's not; erased in the caller's
transaction, another member's kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot.capabilities.member_data import MemberData
from bot.capabilities.reminders.member_data import ReminderData
from bot.capabilities.reminders.storage import Target, add_reminder, claim, set_zone, settle


async def test_export_and_erase_hold_only_the_members_rows(sessions):
    data: MemberData = ReminderData()
    now = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)
    alice, bob = 11, 22
    async with sessions() as session, session.begin():
        first = await add_reminder(session, Target(alice, 5, 50, "en"), "stretch", now - timedelta(minutes=1), now)
        await add_reminder(session, Target(alice, None, 60, "ja"), "薬", now + timedelta(hours=1), now)
        await add_reminder(session, Target(bob, 5, 50, "en"), "bob's", now + timedelta(hours=1), now)
        await set_zone(session, alice, "Asia/Tokyo")
        await set_zone(session, bob, "Europe/Berlin")
    assert first is not None
    async with sessions() as session, session.begin():
        assert await claim(session, first.id, "p1", now, timedelta(seconds=60)) is not None
        await settle(session, first.id, "p1", "delivered", now)

    async with sessions() as session:
        exported = await data.export(session, alice)
    json.dumps(exported)  # plain JSON values
    assert data.name == "reminders"
    assert exported == [
        {"kind": "reminder", "text": "stretch", "due_at": "2026-12-06T15:59:00+00:00", "state": "delivered",
         "server_id": "5", "channel_id": "50", "created_at": "2026-12-06T16:00:00+00:00",
         "delivered_at": "2026-12-06T16:00:00+00:00"},
        {"kind": "reminder", "text": "薬", "due_at": "2026-12-06T17:00:00+00:00", "state": "pending",
         "server_id": None, "channel_id": "60", "created_at": "2026-12-06T16:00:00+00:00", "delivered_at": None},
        {"kind": "time_zone", "zone": "Asia/Tokyo"},
    ]

    async with sessions() as session, session.begin():
        assert await data.erase(session, alice) == 3
    async with sessions() as session:
        assert await data.export(session, alice) == []
        kept = await data.export(session, bob)
    assert [row.get("text", row.get("zone")) for row in kept] == ["bob's", "Europe/Berlin"]
