"""Kept transcripts on SQLite and PostgreSQL: written with the batched writes (a second
transcript of the same voice message is dropped), read back by attachment, and the
member's rows exported as plain JSON values and erased, another member's kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.capabilities.member_data import MemberData
from bot.capabilities.voice.member_data import VoiceTranscripts
from bot.capabilities.voice.storage import TranscriptWrite, VoiceTranscript, transcripts_of

NOW = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)


def row(attachment_id: int, user_id: int, words: str, guild_id: int | None = 5) -> VoiceTranscript:
    return VoiceTranscript(attachment_id=attachment_id, message_id=attachment_id + 1, user_id=user_id,
                           guild_id=guild_id, words=words, seconds=3.5, created_at=NOW)


async def test_transcripts_are_kept_once_and_read_by_attachment(sessions) -> None:
    first = TranscriptWrite(row(100, 11, "hello there"))
    again = TranscriptWrite(row(100, 11, "hello their"))
    assert first.merge_key == again.merge_key and first.plus(again) is first
    async with sessions() as session, session.begin():
        await TranscriptWrite.write_all(session, [first, TranscriptWrite(row(200, 22, "other"))])
    async with sessions() as session, session.begin():
        await TranscriptWrite.write_all(session, [again])  # a Regenerate's second transcript
    async with sessions() as session:
        assert await transcripts_of(session, {100, 200, 300}) == {100: "hello there", 200: "other"}
        assert await transcripts_of(session, set()) == {}


async def test_export_and_erase_hold_only_the_members_transcripts(sessions) -> None:
    data: MemberData = VoiceTranscripts()
    async with sessions() as session, session.begin():
        await TranscriptWrite.write_all(session, [TranscriptWrite(row(100, 11, "in a server")),
                                                  TranscriptWrite(row(300, 11, "in a DM", guild_id=None)),
                                                  TranscriptWrite(row(200, 22, "bob's"))])
    async with sessions() as session:
        exported = await data.export(session, 11)
    json.dumps(exported)
    assert data.name == "voice_transcripts"
    assert sorted(exported, key=lambda r: r["message_id"]) == [
        {"message_id": "101", "server_id": "5", "words": "in a server", "seconds": 3.5,
         "created_at": "2026-12-06T16:00:00+00:00"},
        {"message_id": "301", "server_id": None, "words": "in a DM", "seconds": 3.5,
         "created_at": "2026-12-06T16:00:00+00:00"},
    ]
    async with sessions() as session, session.begin():
        assert await data.erase(session, 11) == 2
    async with sessions() as session:
        assert await data.export(session, 11) == []
        assert await transcripts_of(session, {200}) == {200: "bob's"}
