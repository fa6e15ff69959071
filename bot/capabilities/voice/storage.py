"""The voice messages the bot transcribed: their words, so a later question's history holds
what was said (not the recording), and their seconds, the transcription route's usage.

One row per voice message (its Discord attachment), written with the batched writes
after the answer (`TranscriptWrite`), read in one query for a request's voice messages.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from datetime import datetime
from typing import ClassVar

from sqlalchemy import BigInteger, DateTime, Float, Text, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import Base


class VoiceTranscript(Base):
    """One transcribed voice message: who sent it where, its words and its length."""

    __tablename__ = "voice_transcripts"

    attachment_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    message_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    guild_id: Mapped[int | None] = mapped_column(BigInteger)
    words: Mapped[str] = mapped_column(Text)
    seconds: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


async def transcripts_of(session: AsyncSession, attachment_ids: Collection[int]) -> dict[int, str]:
    """The kept words of these voice messages (attachment id -> words)."""
    if not attachment_ids:
        return {}
    rows = await session.execute(select(VoiceTranscript.attachment_id, VoiceTranscript.words)
                                 .where(VoiceTranscript.attachment_id.in_(list(attachment_ids))))
    return {attachment_id: words for attachment_id, words in rows}


class TranscriptWrite:
    """One transcript to keep (a Regenerate's second transcript of the same message is dropped)."""

    what: ClassVar[str] = "voice_transcript"

    def __init__(self, row: VoiceTranscript) -> None:
        self.row = row

    @property
    def merge_key(self) -> Hashable:
        return self.row.attachment_id

    def plus(self, other: TranscriptWrite) -> TranscriptWrite:
        return self

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[TranscriptWrite]) -> None:
        known = await transcripts_of(session, [item.row.attachment_id for item in items])
        session.add_all([item.row for item in items if item.row.attachment_id not in known])
