"""Everything the bot keeps about a member: the one list `/privacy export` and
`/privacy erase` ask, in the export file's order. A capability that stores rows about a
member adds its `MemberData` here (one line)."""

from __future__ import annotations

from bot.capabilities.images.member_data import ImageData
from bot.capabilities.member_data import MemberData
from bot.capabilities.memory.member_data import MemoryData
from bot.capabilities.privacy.sections import (
    Answers,
    ManagersRecords,
    MessageHours,
    PersonalSettings,
    SearchDays,
    UsageDays,
)
from bot.capabilities.reminders.member_data import ReminderData
from bot.capabilities.voice.member_data import VoiceTranscripts

KEPT: tuple[MemberData, ...] = (
    PersonalSettings(),
    UsageDays(),
    MessageHours(),
    SearchDays(),
    Answers(),
    MemoryData(),
    ReminderData(),
    ImageData(),
    VoiceTranscripts(),
    ManagersRecords(),
)


def kept_on_erase(data: MemberData) -> bool:
    """Set by a server's managers about the member: exported, and left by `/privacy erase`."""
    return data.kept_on_erase
