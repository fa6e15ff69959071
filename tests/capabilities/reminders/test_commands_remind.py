"""`/remind set|list|cancel` and `/personal timezone` through the real discord.py client
and the fake Discord: set in a server and a DM, listed on the member's clock in their
language, cancelled by number; every bound and refusal in one line, nothing stored."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from bot.capabilities.reminders.storage import (
    MAX_PENDING,
    Target,
    add_reminder,
    pending_of,
    zone_of,
)
from bot.db.models_reminders import Reminder
from tests.support.drive_commands import (
    NO_PERMISSIONS,
    autocomplete,
    command,
    discord_text,
    opt,
    sub,
)
from tests.support.drive_discord_client import running_bot

SEND = str((1 << 10) | (1 << 11))  # View Channel and Send Messages: any member of the channel


async def remind(run, fake, name: str, *options: dict[str, Any], **kwargs: Any):
    return await command(run, fake, "remind", sub(name, *options), **{"permissions": SEND, **kwargs})


async def set_(run, fake, when: str, text: str = "stretch", **kwargs: Any):
    return await remind(run, fake, "set", opt("when", when), opt("text", text), **kwargs)


async def timezone(run, fake, zone: str, **kwargs: Any):
    return await command(run, fake, "personal", sub("timezone", opt("zone", zone)), **{"permissions": SEND, **kwargs})


async def stored(bot) -> int:
    async with bot.sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(Reminder)))


async def test_set_list_and_cancel_on_the_members_clock(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    member = int(fake.member_user["id"])
    async with running_bot(fake, bot) as run:
        zone = await timezone(run, fake, "asia/tokyo")
        assert zone.ephemeral and zone.content.startswith("Your time zone is now Asia/Tokyo (it is ")
        tomorrow = await set_(run, fake, "tomorrow 9am", "water the plants")
        assert tomorrow.ephemeral
        assert re.fullmatch(r"I'll remind you here on \w{3} \d{1,2}, \d{4} 9:00\u202fAM \(Asia/Tokyo\) "
                            r"\(<t:\d+:R>\)\.", tomorrow.content), tomorrow.content
        soon = await set_(run, fake, "in 10 minutes", "stretch")
        assert soon.content.startswith("I'll remind you here on ")

        async with bot.sessions() as session:
            pending = await pending_of(session, member)
            assert await zone_of(session, member) == "Asia/Tokyo"
        assert [p.text for p in pending] == ["stretch", "water the plants"]  # soonest first
        assert {(p.guild_id, p.channel_id) for p in pending} == {(int(fake.guild_id), int(fake.channel_id))}
        assert (pending[1].due_at.astimezone(ZoneInfo("Asia/Tokyo")).hour, pending[1].due_at.minute) == (9, 0)

        listed = await remind(run, fake, "list")
        lines = listed.content.split("\n")
        assert listed.ephemeral and lines[0] == "**Your reminders** (2, times in Asia/Tokyo)"
        assert lines[1].startswith("1. ") and lines[1].endswith(" (Asia/Tokyo) — stretch")
        assert lines[2].startswith("2. ") and "9:00\u202fAM (Asia/Tokyo) — water the plants" in lines[2]
        ja = await remind(run, fake, "list", locale="ja")
        assert ja.content.split("\n")[0] == "**あなたのリマインダー**（2件、時刻はAsia/Tokyo）"
        assert " 9:00 (Asia/Tokyo) — water the plants" in ja.content  # Babel's Japanese date and 24-hour clock

        gone = await remind(run, fake, "cancel", opt("number", 1))
        assert gone.content.startswith("Cancelled reminder 1 (due ") and gone.content.endswith("(Asia/Tokyo)).")
        missing = await remind(run, fake, "cancel", opt("number", 2))
        assert missing.content == discord_text(fake, "commands.error.remind_no_such", number=2)
        assert "You have no reminder number 2: </remind list:" in missing.content
        async with bot.sessions() as session:
            assert [p.text for p in await pending_of(session, member)] == ["water the plants"]


async def test_every_refusal_is_one_line_and_stores_nothing(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    async with running_bot(fake, bot) as run:
        refusals = {
            "soon": "I could not read that time. Try: in 10 minutes, in 1h30m, 18:30, 6:30pm, tomorrow 9am, "
                    "2026-12-24 09:00. Nothing was set.",
            "2020-01-01 09:00": "That time has already passed. Nothing was set.",
            "in 400 days": "A reminder can be at most a year ahead. Nothing was set.",
        }
        for when, line in refusals.items():
            refused = await set_(run, fake, when)
            assert (refused.content, refused.ephemeral) == (line, True)
        ja = await set_(run, fake, "そのうち", locale="ja")
        assert ja.content.startswith("時刻を読み取れませんでした。例：10分後")
        long = await set_(run, fake, "in 5 minutes", "x" * 1001)
        assert long.content == "A reminder's text can be at most 1000 characters (this one has 1001). Nothing was set."
        blank = await set_(run, fake, "in 5 minutes", "   ")
        assert blank.content == "A reminder needs some text. Nothing was set."
        closed = await set_(run, fake, "in 5 minutes", permissions=NO_PERMISSIONS)
        assert closed.content == ("Reminders can be set only in a channel where both you and I may send messages. "
                                  "Nothing was set.")
        assert await stored(bot) == 0

        bad_zone = await timezone(run, fake, "Mars/Olympus_Mons")
        # The member's words are shown as typed: Markdown escaped (Discord shows "Mars/Olympus_Mons").
        assert bad_zone.content == ('I don\'t know the time zone "Mars/Olympus\\_Mons". Use an IANA name such as '
                                    "Asia/Tokyo or Europe/Berlin (the list suggests them as you type).")
        async with bot.sessions() as session:
            assert await zone_of(session, int(fake.member_user["id"])) is None  # still UTC


async def test_a_member_has_at_most_25_waiting(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    member = int(fake.member_user["id"])
    now = datetime.now(UTC)
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            for n in range(MAX_PENDING):
                await add_reminder(session, Target(member, None, 1, "en"), f"r{n}", now + timedelta(hours=n + 1), now)
        full = await set_(run, fake, "in 5 minutes")
        assert full.content == discord_text(fake, "commands.error.remind_full", limit=25)
        assert full.content.startswith("You have 25 reminders waiting, the most one member may have")
        assert await stored(bot) == MAX_PENDING
        other = await set_(run, fake, "in 5 minutes", user={**fake.member_user, "id": "4242", "username": "bob"})
        assert other.content.startswith("I'll remind you here on ")  # the bound is each member's own


async def test_in_a_dm_the_reminder_goes_to_the_dm(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    async with running_bot(fake, bot) as run:
        done = await set_(run, fake, "18:30", dm=True)
        assert done.content.startswith("I'll remind you here on ") and "(UTC)" in done.content
        listed = await remind(run, fake, "list", dm=True)
        assert listed.content.startswith("**Your reminders** (1, times in UTC)")
    async with bot.sessions() as session:
        [held] = await pending_of(session, int(fake.member_user["id"]))
    assert (held.guild_id, held.channel_id) == (None, int(fake.dm_channel_id))


async def test_the_zone_autocomplete_offers_at_most_25_iana_names(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    async with running_bot(fake, bot) as run:
        focused = {"type": 1, "name": "timezone", "options": [{"type": 3, "name": "zone", "value": "tokyo",
                                                                "focused": True}]}
        tokyo = await autocomplete(run, fake, "personal", focused)
        assert [c["value"] for c in tokyo] == ["Asia/Tokyo"]
        focused["options"][0]["value"] = ""
        every = await autocomplete(run, fake, "personal", focused)
        assert len(every) == 25
