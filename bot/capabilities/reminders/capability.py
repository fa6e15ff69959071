"""Reminders' seams: the `set_reminder` tool offered to an answer whose question may ask
for a reminder (`asking.py`; the bot has a database), bound to its asker and channel, and
the note line naming each reminder the answer set, so none is set silently."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from bot.capabilities.reminders.asking import asks_for_reminder
from bot.capabilities.reminders.setting import SetLog
from bot.capabilities.reminders.storage import Target
from bot.capabilities.reminders.tool import reminder_tool
from bot.capabilities.reminders.zones import shown_due
from bot.question.seams import AnswerPart, Joining
from bot.tools import ToolLoop
from bot.turn.seams import TurnEnding
from providers.i18n import t

SET_EVENT = "reminder_set"  # dispatched on the client: the scheduler wakes for the new due time


class Reminders:
    """Joins an answer whose question may ask for a reminder, where reminders can be
    stored (a bot with a database)."""

    def join(self, joining: Joining) -> AnswerPart | None:
        question = joining.question
        if joining.services.sessions is None or not asks_for_reminder(question.prompt):
            return None
        target = Target(question.asker_id, question.where.guild_id, question.where.channel_id, question.locale)
        return ReminderPart(joining, target)


@dataclass
class ReminderPart(AnswerPart):
    """One answer's reminders: the tool bound to it, and what it set."""

    joining: Joining
    target: Target
    log: SetLog = field(default_factory=SetLog)

    def tools(self, loop: ToolLoop) -> ToolLoop:
        services = self.joining.services
        assert services.sessions is not None  # join said so
        tool = reminder_tool(services.sessions, self.target, self.log, lambda: services.client.dispatch(SET_EVENT))
        return dataclasses.replace(loop, registry=loop.registry.adding(tool))

    async def after(self, ending: TurnEnding) -> None:
        """"reminder set for …" under the answer, one line per reminder."""
        for done in self.log.set:
            when = shown_due(done.held.due_at, done.zone, ending.locale)
            await ending.delivery.add_note(f"-# {t('chat.reminders.set', ending.locale, when=when)}")
