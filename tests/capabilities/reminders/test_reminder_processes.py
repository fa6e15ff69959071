"""Reminders through the real `python -m bot` process: a reminder set before a restart
is sent once after it (and not again by a later start); two processes on one PostgreSQL
database send each reminder exactly once."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy import select

from bot.capabilities.reminders.storage import Target, add_reminder
from bot.db.engine import create_engine, session_factory
from bot.db.models_reminders import Reminder
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import bot_process
from tests.support.drive_shard_processes import postgres_database_url, shard_processes
from tests.support.fake_discord_server import FakeDiscord, StoredMessage

SEND = str((1 << 10) | (1 << 11))


def reminders_in(fake: FakeDiscord) -> list[StoredMessage]:
    return [m for m in fake.bot_messages(fake.channel_id, ephemeral=False) if "Reminder:" in m.content]


async def test_a_reminder_set_before_a_restart_is_sent_once_after_it(fake_discord: FakeDiscord,
                                                                    tmp_path: Path) -> None:
    fake = fake_discord
    env = {"BOT_ENCRYPTION_KEY": Fernet.generate_key().decode()}
    async with bot_process(fake, env, tmp_path) as run:
        await run.wait_for(lambda: any(c["name"] == "remind" for c in fake.commands.get("global", [])))
        done = await command(run, fake, "remind", sub("set", opt("when", "in 8 seconds"), opt("text", "stretch")),
                             permissions=SEND)
        due = time.monotonic() + 8
        assert done.content.startswith("I'll remind you here on ")
    assert run.process.returncode == 0, run.log()
    assert reminders_in(fake) == []  # the bot went down before it was due
    await asyncio.sleep(max(0.0, due + 1 - time.monotonic()))

    async with bot_process(fake, env, tmp_path) as run:
        await run.wait_for(lambda: bool(reminders_in(fake)), timeout=15)
        await asyncio.sleep(2)
    assert [m.content for m in reminders_in(fake)] == [f"⏰ <@{fake.member_user['id']}> Reminder: stretch"]

    async with bot_process(fake, env, tmp_path):
        await asyncio.sleep(3)  # a later start sends nothing again
    assert len(reminders_in(fake)) == 1


async def test_two_processes_send_each_reminder_exactly_once(tmp_path: Path) -> None:
    async with postgres_database_url() as url, FakeDiscord(shards=2) as fake:
        fake.message_limit = 1000  # the fake's per-channel bucket: this test is about claims
        shared = {"DATABASE_URL": url, "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode()}
        async with shard_processes(fake, shared, tmp_path) as run:
            await run.wait_for(lambda: fake.ready_shards() == {0, 1} and bool(fake.commands), timeout=60)
            engine = create_engine(url)
            sessions = session_factory(engine)
            target = Target(int(fake.member_user["id"]), int(fake.guild_id), int(fake.channel_id), "en")
            now = datetime.now(UTC)
            async with sessions() as session, session.begin():
                for n in range(12):
                    await add_reminder(session, target, f"task {n}", now + timedelta(seconds=2), now)
            await run.wait_for(lambda: len(reminders_in(fake)) >= 12, timeout=20)
            await asyncio.sleep(3)  # no second send from the other process
            async with sessions() as session:
                holders = Counter((await session.scalars(select(Reminder.claimed_by))).all())
                states = set((await session.scalars(select(Reminder.state))).all())
            await engine.dispose()
    sent = Counter(m.content.rsplit(": ", 1)[1] for m in reminders_in(fake))
    assert sent == Counter({f"task {n}": 1 for n in range(12)})
    assert states == {"delivered"} and sum(holders.values()) == 12 and len(holders) <= 2
