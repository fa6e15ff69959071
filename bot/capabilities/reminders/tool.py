"""The `set_reminder` tool: a reminder set from a question ("remind me in an hour to
stretch"), for the member who asked, in the channel they asked in. The same bounds and
refusals as `/remind set`; a refusal goes back to the model as the tool's error (in
English, the model's working language), so it can tell the member in theirs."""

from __future__ import annotations

import functools
from collections.abc import Callable

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.reminders.setting import ReminderRefused, SetLog, set_reminder
from bot.capabilities.reminders.storage import MAX_TEXT, Target
from bot.capabilities.reminders.zones import shown_due
from bot.tools.registry import Tool, ToolContext, ToolError
from providers.i18n import t

SET_REMINDER_TOOL = "set_reminder"
SET_REMINDER_DESCRIPTION = (
    "Set a reminder for the member who asked: at the time given, the bot posts the text in this "
    "channel and mentions them. Use only when they ask to be reminded.")


class SetReminderArgs(BaseModel):
    when: str = Field(..., min_length=1, max_length=100, description=(
        "When, in the member's own clock and words: 'in 10 minutes', 'in 1h30m', '18:30', '6:30pm', "
        "'tomorrow 9am', '2026-12-24 09:00', '10分後', '明日 9時'."))
    text: str = Field(..., min_length=1, description=(
        f"What to remind them of, in their language, at most {MAX_TEXT} characters."))


async def set_reminder_tool(args: SetReminderArgs, _context: ToolContext, *,
                            sessions: async_sessionmaker[AsyncSession], target: Target, log: SetLog,
                            wake: Callable[[], None]) -> str:
    """Set it (and wake the scheduler), or raise the refusal as the model's ToolError."""
    try:
        done = await set_reminder(sessions, target, args.when, args.text)
    except ReminderRefused as refused:
        raise ToolError(t(refused.key, "en", **refused.params)) from None
    log.set.append(done)
    wake()
    return f"Reminder set for {shown_due(done.held.due_at, done.zone, 'en')}."


def reminder_tool(sessions: async_sessionmaker[AsyncSession], target: Target, log: SetLog,
                  wake: Callable[[], None]) -> Tool:
    """The tool bound to one answer: its asker and channel, the log its note reads, and
    how it wakes the scheduler for the new due time."""
    run = functools.partial(set_reminder_tool, sessions=sessions, target=target, log=log, wake=wake)
    return Tool(SET_REMINDER_TOOL, SET_REMINDER_DESCRIPTION, SetReminderArgs, run)
