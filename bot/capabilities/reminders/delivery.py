"""Delivering reminders: one scheduler task per process, started and stopped with the
reminders cog (so with the bot: discord.py unloads every cog when the bot closes).

The task wakes for the soonest due reminder (or every POLL_SECONDS, to see reminders
another process stored), and when one was set in this process (`wake`). Each due
reminder is claimed with one conditional UPDATE (`storage.claim`): of several processes
only the one whose UPDATE changed the row sends it, then marks it delivered. A reminder
missed while the bot was down is due already when it starts: it is sent then, once, with
its due time shown.

Between sending and marking: if the process dies there, the reminder stays claimed until
its lease (LEASE) ends and another process (or this one, restarted) sends it again — a
duplicate is possible in that window only. Marking before sending would instead lose the
reminder in the same window; a duplicate is the kinder failure for a reminder.

A clean stop (the bot closing) lets the send under way be marked first (STOP_GRACE).

A channel that is gone or forbids the bot: one log line and the reminder is marked failed
(never retried). It is not sent to the member's DM instead: the member chose where it
goes, and a DM they did not ask for is not the bot's call. A passing failure (Discord
5xx, a network error) is tried again after the lease, at most MAX_ATTEMPTS times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import aiohttp
import discord
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.reminders.storage import Held, Outcome, claim, due_ids, next_due, settle
from providers.i18n import t

log = logging.getLogger(__name__)

POLL_SECONDS = 5.0  # reminders another process stored are seen within this
LEASE = timedelta(seconds=60)  # how long a claim holds a reminder for its sender
STOP_GRACE = 10.0  # seconds a stopping bot waits for the send under way to be marked
LATE_AFTER = timedelta(seconds=60)  # sent later than this after its due time: the message says when it was due
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def holder_name() -> str:
    """This process among the bot's processes: host, pid and a random part (a pid reused
    after a restart is another holder)."""
    return f"{socket.gethostname()[:32]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def reminder_text(held: Held, now: datetime) -> str:
    """The message: the member's mention and their text; when late, the due time too."""
    body = t("chat.reminders.message", held.locale, mention=f"<@{held.user_id}>", text=held.text)
    if now - held.due_at > LATE_AFTER:
        body += "\n-# " + t("chat.reminders.late", held.locale, due=f"<t:{int(held.due_at.timestamp())}:F>")
    return body


def only_the_member(user_id: int) -> discord.AllowedMentions:
    """The member pings; nothing in their text pings anyone else."""
    return discord.AllowedMentions(users=[discord.Object(id=user_id)], everyone=False, roles=False,
                                   replied_user=False)


async def send_reminder(client: discord.Client, held: Held, now: datetime) -> Outcome:
    """Post the reminder where it was set; what became of it."""
    channel = client.get_partial_messageable(held.channel_id, guild_id=held.guild_id)
    try:
        await channel.send(reminder_text(held, now), allowed_mentions=only_the_member(held.user_id))
    except (discord.Forbidden, discord.NotFound) as exc:
        log.warning("reminder %d not delivered: channel %d is gone or forbids the bot (HTTP %d); marked failed",
                    held.id, held.channel_id, exc.status)
        return "failed"
    except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
        log.warning("reminder %d not delivered yet (%s): tried again later", held.id, type(exc).__name__)
        return "retry"
    return "delivered"


class ReminderScheduler:
    """This process's delivery task (see the module docstring)."""

    def __init__(self, client: discord.Client, sessions: async_sessionmaker[AsyncSession], *,
                 clock: Clock = utc_now, poll: float = POLL_SECONDS, lease: timedelta = LEASE) -> None:
        self.client, self.sessions, self.clock = client, sessions, clock
        self.poll, self.lease = poll, lease
        self.holder = holder_name()
        self._woken = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="reminder-scheduler")

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Let a send under way be marked (no duplicate from a clean stop), then end."""
        if self._task is None:
            return
        self._stopping = True
        self._woken.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), grace)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    def wake(self) -> None:
        """A reminder was set here: look at the due times again now."""
        self._woken.set()

    async def _run(self) -> None:
        while not self._stopping:
            try:
                await self.deliver_due()
                delay = await self._until_next()
            except Exception:  # noqa: BLE001 - a database hiccup must not end delivery for good
                log.exception("delivering reminders failed; trying again")
                delay = self.poll
            if self._stopping:
                break
            self._woken.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), delay)

    async def _until_next(self) -> float:
        """Seconds until the soonest reminder is due, at most the poll interval."""
        async with self.sessions() as session:
            soonest = await next_due(session)
        if soonest is None:
            return self.poll
        return min(self.poll, max(0.0, (soonest - self.clock()).total_seconds()))

    async def deliver_due(self) -> int:
        """Claim, send and settle every reminder due now; how many this process sent."""
        async with self.sessions() as session:
            ids = await due_ids(session, self.clock())
        sent = 0
        for reminder_id in ids:
            if self._stopping:
                break
            sent += await self._deliver_one(reminder_id)
        return sent

    async def _deliver_one(self, reminder_id: int) -> int:
        async with self.sessions() as session, session.begin():
            held = await claim(session, reminder_id, self.holder, self.clock(), self.lease)
        if held is None:
            return 0  # another process holds it, or it was delivered or cancelled meanwhile
        outcome = await send_reminder(self.client, held, self.clock())
        async with self.sessions() as session, session.begin():
            await settle(session, reminder_id, self.holder, outcome, self.clock())
        return int(outcome == "delivered")
