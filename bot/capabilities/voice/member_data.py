"""What voice keeps about a member, for `/privacy export` and `/privacy erase`: the words of
the voice messages the bot transcribed (the recordings themselves are never stored)."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.member_data import Exported, MemberData, id_text
from bot.capabilities.voice.storage import VoiceTranscript
from bot.repo.common import as_utc


class VoiceTranscripts(MemberData):
    name = "voice_transcripts"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(VoiceTranscript).where(VoiceTranscript.user_id == user_id)
                                     .order_by(VoiceTranscript.created_at))
        return [{"message_id": id_text(row.message_id), "server_id": id_text(row.guild_id),
                 "words": row.words, "seconds": row.seconds, "created_at": as_utc(row.created_at).isoformat()}
                for row in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        result = await session.execute(delete(VoiceTranscript).where(VoiceTranscript.user_id == user_id))
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
