"""Reminders and time zones in the database: set, list, cancel, and the claim that lets
exactly one process deliver each reminder.

A member has at most MAX_PENDING reminders waiting; the count and the insert run under a
per-member lock on PostgreSQL (several processes), and under SQLite's single writer
otherwise. Delivery: `due_ids` finds what is due and unclaimed, `claim` takes one with a
single conditional UPDATE (the process whose UPDATE changed the row holds it until its
lease ends), `settle` records the outcome. Times are stored and compared in UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import case, delete, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models_reminders import MemberTimeZone, Reminder
from bot.repo.common import insert_for

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
MAX_PENDING = 25  # each member's reminders waiting at once
MAX_TEXT = 1000  # characters of one reminder's text
MAX_ATTEMPTS = 3  # sends that failed for a passing reason (Discord 5xx) before it is marked failed
MAX_ZONE_NAME_CHARS = 64  # the longest IANA name is 32; the column holds 64
_LOCK_CLASS = 0x52454D  # PostgreSQL advisory lock class of the per-member reminder lock
Outcome = Literal["delivered", "failed", "retry"]


@dataclass(frozen=True)
class Target:
    """Whose reminder it is and where it is delivered (a DM's channel in a DM)."""

    user_id: int
    guild_id: int | None
    channel_id: int
    locale: str | None


@dataclass(frozen=True)
class Held:
    """A reminder as a process delivers or a member reads it."""

    id: int
    user_id: int
    guild_id: int | None
    channel_id: int
    text: str
    locale: str | None
    due_at: datetime

    @classmethod
    def of(cls, row: Reminder) -> Held:
        return cls(row.id, row.user_id, row.guild_id, row.channel_id, row.text, row.locale, utc(row.due_at))


def utc(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes: every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def _lock_member(session: AsyncSession, user_id: int) -> None:
    """Serialize one member's reminder writes across processes (PostgreSQL); SQLite has
    one writer already."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:c, :o)"),
                              {"c": _LOCK_CLASS, "o": user_id % 2**31})


async def add_reminder(session: AsyncSession, target: Target, words: str, due: datetime,
                       now: datetime) -> Held | None:
    """Store a reminder; None (nothing stored) when the member has MAX_PENDING waiting."""
    await _lock_member(session, target.user_id)
    if len(await pending_of(session, target.user_id)) >= MAX_PENDING:
        return None
    row = Reminder(user_id=target.user_id, guild_id=target.guild_id, channel_id=target.channel_id,
                   text=words, locale=target.locale, due_at=due, created_at=now, state=PENDING, attempts=0)
    session.add(row)
    await session.flush()
    return Held.of(row)


async def pending_of(session: AsyncSession, user_id: int) -> list[Held]:
    """The member's waiting reminders, soonest first: the numbers `/remind list` shows."""
    rows = await session.scalars(select(Reminder).where(Reminder.user_id == user_id, Reminder.state == PENDING)
                                 .order_by(Reminder.due_at, Reminder.id))
    return [Held.of(row) for row in rows]


async def cancel(session: AsyncSession, user_id: int, number: int) -> Held | None:
    """Delete the member's `number`-th waiting reminder (1-based, as listed); None when
    there is no such number."""
    await _lock_member(session, user_id)
    pending = await pending_of(session, user_id)
    if not 1 <= number <= len(pending):
        return None
    chosen = pending[number - 1]
    await session.execute(delete(Reminder).where(Reminder.id == chosen.id, Reminder.state == PENDING))
    return chosen


async def due_ids(session: AsyncSession, now: datetime, limit: int = 50) -> list[int]:
    """Reminders due by `now` that no process holds (or whose holder's lease ran out)."""
    rows = await session.scalars(
        select(Reminder.id).where(Reminder.state == PENDING, Reminder.due_at <= now,
                                  or_(Reminder.claim_until.is_(None), Reminder.claim_until < now))
        .order_by(Reminder.due_at).limit(limit))
    return list(rows)


async def next_due(session: AsyncSession) -> datetime | None:
    """When a waiting reminder may next be sent: the soonest due time, or for one a
    process holds, the end of its lease."""
    free_at = case((Reminder.claim_until.is_(None), Reminder.due_at), else_=Reminder.claim_until)
    soonest = await session.scalar(select(func.min(free_at)).where(Reminder.state == PENDING))
    return utc(soonest) if soonest is not None else None


async def claim(session: AsyncSession, reminder_id: int, holder: str, now: datetime,
                lease: timedelta) -> Held | None:
    """Hold the reminder for `lease`: one conditional UPDATE, so of processes racing for it
    exactly one changes the row; None for the others (or when it is no longer waiting)."""
    result = await session.execute(
        update(Reminder).where(Reminder.id == reminder_id, Reminder.state == PENDING,
                               or_(Reminder.claim_until.is_(None), Reminder.claim_until < now))
        .values(claimed_by=holder, claim_until=now + lease, attempts=Reminder.attempts + 1))
    if result.rowcount != 1:
        return None
    row = await session.get(Reminder, reminder_id)
    return Held.of(row) if row is not None else None


async def settle(session: AsyncSession, reminder_id: int, holder: str, outcome: Outcome, now: datetime) -> None:
    """Record what the holder's send did: delivered, failed for good, or (a passing failure)
    left claimed, so it is tried again when the lease ends — failed once MAX_ATTEMPTS were used."""
    held = update(Reminder).where(Reminder.id == reminder_id, Reminder.claimed_by == holder)
    if outcome == "retry":
        await session.execute(held.where(Reminder.attempts >= MAX_ATTEMPTS).values(state=FAILED))
        return
    await session.execute(held.values(state=DELIVERED if outcome == "delivered" else FAILED, delivered_at=now))


async def set_zone(session: AsyncSession, user_id: int, zone: str) -> None:
    stmt = insert_for(session, MemberTimeZone).values(user_id=user_id, zone=zone)
    await session.execute(stmt.on_conflict_do_update(index_elements=["user_id"], set_={"zone": zone}))


async def zone_of(session: AsyncSession, user_id: int) -> str | None:
    """The member's stored zone name (None: UTC applies)."""
    return await session.scalar(select(MemberTimeZone.zone).where(MemberTimeZone.user_id == user_id))
