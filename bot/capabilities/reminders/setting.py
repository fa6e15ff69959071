"""Setting a reminder, the same for `/remind set` and the model's `set_reminder` tool:
the text's bounds, the time read in the member's zone, the member's bound of waiting
reminders. A refusal is a catalog key (and its parameters) the caller shows: a line to
the member, or the tool's error to the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.reminders.storage import (
    MAX_PENDING,
    MAX_TEXT,
    Held,
    Target,
    add_reminder,
    zone_of,
)
from bot.capabilities.reminders.when import WhenRefused, parse_when
from bot.capabilities.reminders.zones import zone_or_default

# Why the words name no time -> the line that says so.
WHEN_REFUSALS = {
    "unparsed": "commands.error.remind_unparsed",
    "past": "commands.error.remind_past",
    "too_far": "commands.error.remind_too_far",
}


class ReminderRefused(Exception):
    """Nothing was set; `key` and `params` say why, in the reader's language."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


@dataclass(frozen=True)
class Set:
    """A reminder just stored, and the zone its time is shown in."""

    held: Held
    zone: ZoneInfo


@dataclass
class SetLog:
    """The reminders one answer's tool set: its note line names each."""

    set: list[Set] = field(default_factory=list)


def checked_text(words: str) -> str:
    """The reminder's text, stripped; refused when empty or over MAX_TEXT characters."""
    words = words.strip()
    if not words:
        raise ReminderRefused("commands.error.remind_text_empty")
    if len(words) > MAX_TEXT:
        raise ReminderRefused("commands.error.remind_text_long", limit=MAX_TEXT, count=len(words))
    return words


async def member_zone(session: AsyncSession, user_id: int) -> ZoneInfo:
    """The member's zone (UTC until they choose one)."""
    return zone_or_default(await zone_of(session, user_id))


async def set_reminder(sessions: async_sessionmaker[AsyncSession], target: Target, when: str, words: str,
                       now: datetime | None = None) -> Set:
    """Store the reminder `words` at the time `when` names; ReminderRefused otherwise."""
    words = checked_text(words)
    now = now or datetime.now(UTC)
    async with sessions() as session, session.begin():
        zone = await member_zone(session, target.user_id)
        try:
            due = parse_when(when, now, zone)
        except WhenRefused as refused:
            raise ReminderRefused(WHEN_REFUSALS[refused.reason]) from None
        held = await add_reminder(session, target, words, due, now)
    if held is None:
        raise ReminderRefused("commands.error.remind_full", limit=MAX_PENDING)
    return Set(held, zone)
