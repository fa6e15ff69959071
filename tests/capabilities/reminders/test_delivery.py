"""Delivery through the real bot and the fake Discord: on time, mentioning only the
member; missed while the bot was down, delivered late once with its due time; a channel
that forbids the bot marks the reminder failed (one log line, no retry); several
schedulers on one database (SQLite and PostgreSQL) send each reminder exactly once."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from bot import migrate
from bot.capabilities.reminders.delivery import ReminderScheduler
from bot.capabilities.reminders.storage import DELIVERED, FAILED, Target, add_reminder
from bot.db.engine import session_factory
from bot.db.models_reminders import Reminder
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord, StoredMessage

SEND = str((1 << 10) | (1 << 11))


def reminders_in(fake: FakeDiscord, channel_id: str | int) -> list[StoredMessage]:
    return [m for m in fake.bot_messages(channel_id, ephemeral=False) if "Reminder:" in m.content]


async def add(sessions, target: Target, text: str, due: datetime) -> None:
    async with sessions() as session, session.begin():
        await add_reminder(session, target, text, due, datetime.now(UTC))


async def states(sessions) -> list[str]:
    async with sessions() as session:
        return list(await session.scalars(select(Reminder.state).order_by(Reminder.id)))


async def test_on_time_mentioning_only_the_member(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    member = fake.member_user["id"]
    async with running_bot(fake, bot) as run:
        set_at = time.monotonic()
        done = await command(run, fake, "remind", sub("set", opt("when", "in 2 seconds"),
                                                      opt("text", "stretch @everyone <@&1> <@4242>")),
                             permissions=SEND)
        assert done.content.startswith("I'll remind you here on ")
        await run.wait_for(lambda: bool(reminders_in(fake, fake.channel_id)), timeout=8)
        [sent] = reminders_in(fake, fake.channel_id)
        assert 1.5 <= sent.created_at - set_at <= 4.0  # on time within a few seconds
        assert sent.content == f"⏰ <@{member}> Reminder: stretch @everyone <@&1> <@4242>"
        assert sent.allowed_mentions == {"parse": [], "users": [int(member)]}  # no @everyone, no role, no one else
        await asyncio.sleep(1.5)
        assert len(reminders_in(fake, fake.channel_id)) == 1
        assert await states(bot.sessions) == [DELIVERED]
        assert fake.rate_limited == []


async def test_missed_while_down_delivered_late_once_with_its_due_time(fake_discord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    member = int(fake.member_user["id"])
    await migrate.upgrade(bot.engine)  # the bot was down: its database holds what was set before
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    await add(bot.sessions, Target(member, int(fake.guild_id), int(fake.channel_id), "en"), "call mom", due)
    await add(bot.sessions, Target(member, None, int(fake.dm_channel_id), "ja"), "薬を飲む", due)
    async with running_bot(fake, bot) as run:
        await run.wait_for(lambda: len(reminders_in(fake, fake.channel_id)) == 1
                           and len(fake.bot_messages(fake.dm_channel_id)) == 1, timeout=8)
        await asyncio.sleep(1.5)  # and never again
        [late] = reminders_in(fake, fake.channel_id)
        [dm] = fake.bot_messages(fake.dm_channel_id)
    stamp = f"<t:{int(due.timestamp())}:F>"
    assert late.content == (f"⏰ <@{member}> Reminder: call mom\n"
                            f"-# This was due {stamp}; it comes late because the bot was away.")
    assert dm.content == f"⏰ <@{member}> リマインダー：薬を飲む\n-# 予定は{stamp}でした。ボットが停止していたため遅れてお知らせします。"
    assert await states(bot.sessions) == [DELIVERED, DELIVERED]


async def test_a_channel_that_forbids_the_bot_fails_the_reminder_once(fake_discord, bot_factory, caplog):
    fake, bot = fake_discord, bot_factory()
    await migrate.upgrade(bot.engine)
    fake.forbid_channel(fake.channel_id)
    await add(bot.sessions, Target(int(fake.member_user["id"]), int(fake.guild_id), int(fake.channel_id), "en"),
              "secret plans", datetime.now(UTC) - timedelta(seconds=1))
    with caplog.at_level(logging.WARNING, logger="bot.capabilities.reminders.delivery"):
        async with running_bot(fake, bot):
            for _ in range(50):
                if await states(bot.sessions) == [FAILED]:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)
    assert await states(bot.sessions) == [FAILED]
    assert fake.count("POST", rf"^/channels/{fake.channel_id}/messages$") == 1  # not retried
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.capabilities.reminders.delivery"]
    assert len(lines) == 1 and "gone or forbids the bot" in lines[0]
    assert "secret plans" not in caplog.text  # the member's text is never logged


async def test_racing_schedulers_send_each_reminder_exactly_once(fake_discord, bot_factory, engine_factory):
    """Three schedulers, each on its own engine (as three processes), all wake at once on
    the same 20 due reminders: every reminder is claimed, sent and marked by one of them."""
    fake = fake_discord
    member = int(fake.member_user["id"])
    sessions = [session_factory(engine_factory()) for _ in range(3)]
    target = Target(member, int(fake.guild_id), int(fake.channel_id), "en")
    for n in range(20):
        await add(sessions[0], target, f"task {n}", datetime.now(UTC) - timedelta(seconds=1))
    fake.message_limit = 1000  # the fake's per-channel bucket: this test is about claims, not pacing
    async with running_bot(fake, bot_factory()) as run:
        schedulers = [ReminderScheduler(run.bot, s) for s in sessions]
        sent = await asyncio.gather(*(s.deliver_due() for s in schedulers for _ in range(2)))
        assert sum(sent) == 20
        texts = Counter(m.content.rsplit(": ", 1)[1] for m in reminders_in(fake, fake.channel_id))
    assert texts == Counter({f"task {n}": 1 for n in range(20)})
    assert await states(sessions[1]) == [DELIVERED] * 20
