"""The member's transcribed voice messages in `/personal usage`: how many and how long,
today and in the report's period — the transcription route's usage. Audio a model heard
itself is billed as its input tokens and counted with the answer's usage. Nothing when
no voice message was transcribed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.voice.storage import VoiceTranscript


async def _since(session: AsyncSession, user_id: int, day: date) -> tuple[int, float]:
    """Voice messages transcribed for the member from the start of `day` (UTC), and their seconds."""
    start = datetime.combine(day, time.min, UTC)
    count, seconds = (await session.execute(
        select(func.count(), func.coalesce(func.sum(VoiceTranscript.seconds), 0.0))
        .where(VoiceTranscript.user_id == user_id, VoiceTranscript.created_at >= start))).one()
    return int(count), float(seconds)


async def voice_usage_line(session: AsyncSession, user_id: int, day: date, days: int,
                           say: Callable[..., str]) -> str | None:
    """One line of the member's transcribed voice messages (`say`: the caller's localized text), or None."""
    period, seconds = await _since(session, user_id, day - timedelta(days=days - 1))
    if not period:
        return None
    today, _ = await _since(session, user_id, day)
    return say("commands.reply.personal_usage_voice", today=today, period=period, days=days,
               minutes=f"{seconds / 60:.1f}")
