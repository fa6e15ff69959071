"""A member's rows in every table that keeps something about them, written the way the
bot writes them, and counted per table to show what an erasure took."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from bot import repo
from bot.capabilities.images.storage import take_image
from bot.capabilities.memory.storage import add_memory, set_memory
from bot.capabilities.reminders.storage import Target, add_reminder, set_zone
from bot.capabilities.voice.storage import VoiceTranscript
from bot.db.models import (
    AccessRule,
    AnswerPart,
    AnswerRecord,
    MessageHour,
    PersonalConfig,
    SearchDay,
    UsageDay,
)
from bot.db.models_images import ImageDay
from bot.db.models_memory import Memory, MemoryOptIn
from bot.db.models_reminders import MemberTimeZone, Reminder
from bot.repo.controls import add_access_rule
from bot.vault import Vault
from tests.support.fake_discord_server import snowflake


@dataclass
class Seeded:
    """What `seed` wrote for one member (answer parts name no member: their ids are kept)."""

    user_id: int
    part_ids: list[int] = field(default_factory=list)


def _ids(count: int) -> list[int]:
    return [int(snowflake()) for _ in range(count)]


async def seed(session, vault: Vault, user_id: int, guild_id: int, key: str, *, reasoning: str = "thought",
               answers: int = 2, blocked: bool = True) -> Seeded:
    """Personal settings here and globally (with `key`), usage, counters and answers of
    yesterday and today, and, with `blocked`, a manager's block on the member."""
    now = datetime.now(UTC)
    today, hour = now.date(), now.replace(minute=0, second=0, microsecond=0)
    await repo.set_personal_key(session, vault, user_id, guild_id, key)
    await repo.set_personal_model(session, user_id, guild_id, "anthropic", "claude-own")
    await repo.set_personal_key(session, vault, user_id, None, key + "-global")
    for day in (today - timedelta(days=1), today):
        session.add(UsageDay(guild_id=guild_id, user_id=user_id, provider="openai", model="gpt-x",
                             credential_source="server", day=day, estimated=False, input_tokens=10,
                             output_tokens=5, reasoning_tokens=0, cached_input_tokens=0, messages=1, searches=0))
        session.add(SearchDay(guild_id=guild_id, user_id=user_id, day=day, searches=2))
    session.add(UsageDay(guild_id=None, user_id=user_id, provider="openai", model="gpt-x", credential_source="personal",
                         day=today - timedelta(days=3), estimated=True, input_tokens=1, output_tokens=1,
                         reasoning_tokens=0, cached_input_tokens=0, messages=1, searches=0))
    for at in (hour - timedelta(hours=2), hour):
        session.add(MessageHour(guild_id=guild_id, user_id=user_id, hour=at, messages=3))
    seeded = Seeded(user_id)
    for number in range(answers):
        first, *rest = parts = _ids(2)
        question = int(snowflake())
        session.add(AnswerRecord(first_message_id=first, channel_id=1, guild_id=guild_id, asker_id=user_id,
                                 question_ids=str(question), finish_reason="stop", reasoning=reasoning,
                                 sources="https://example.com/a\tA page" if number == 0 else None))
        for position, message_id in enumerate(parts):
            session.add(AnswerPart(message_id=message_id, first_message_id=first, question_id=question,
                                   channel_id=1, position=position))
        seeded.part_ids += parts
    if blocked:
        await add_access_rule(session, guild_id, user_id, "block_member")
    await set_memory(session, user_id, True)
    await add_memory(session, user_id, guild_id, "likes green tea")
    await add_memory(session, user_id, None, "said in a DM")
    await add_reminder(session, Target(user_id, guild_id, 1, None), "stretch", now + timedelta(hours=1), now)
    await set_zone(session, user_id, "Asia/Tokyo")
    for day in (today - timedelta(days=1), today):
        await take_image(session, user_id, day, None, on_operator=True)
    session.add(VoiceTranscript(attachment_id=int(snowflake()), message_id=int(snowflake()), user_id=user_id,
                                guild_id=guild_id, words="stretch at noon", seconds=3.5, created_at=now))
    await session.flush()
    return seeded


async def counts(session, seeded: Seeded) -> dict[str, int]:
    """The member's rows per table."""
    user = seeded.user_id

    async def count(model, *where) -> int:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)))

    return {
        "personal_configs": await count(PersonalConfig, PersonalConfig.user_id == user),
        "usage_days": await count(UsageDay, UsageDay.user_id == user),
        "message_hours": await count(MessageHour, MessageHour.user_id == user),
        "search_days": await count(SearchDay, SearchDay.user_id == user),
        "answers": await count(AnswerRecord, AnswerRecord.asker_id == user),
        "answer_parts": await count(AnswerPart, AnswerPart.message_id.in_(seeded.part_ids)),
        "access_rules": await count(AccessRule, AccessRule.target_id == user),
        "memory_opt_ins": await count(MemoryOptIn, MemoryOptIn.user_id == user),
        "memories": await count(Memory, Memory.user_id == user),
        "reminders": await count(Reminder, Reminder.user_id == user),
        "member_time_zones": await count(MemberTimeZone, MemberTimeZone.user_id == user),
        "image_days": await count(ImageDay, ImageDay.user_id == user),
        "voice_transcripts": await count(VoiceTranscript, VoiceTranscript.user_id == user),
    }


SEEDED = {"personal_configs": 2, "usage_days": 3, "message_hours": 2, "search_days": 2, "answers": 2,
          "answer_parts": 4, "access_rules": 1,
          "memory_opt_ins": 1, "memories": 2, "reminders": 1, "member_time_zones": 1,
          "image_days": 2, "voice_transcripts": 1}
# After an erasure: today's counters (limits count them) and the manager's block stay.
AFTER_ERASE = {"personal_configs": 0, "usage_days": 1, "message_hours": 1, "search_days": 1, "answers": 0,
               "answer_parts": 0, "access_rules": 1,
               "memory_opt_ins": 0, "memories": 0, "reminders": 0, "member_time_zones": 0,
               "image_days": 1, "voice_transcripts": 0}
