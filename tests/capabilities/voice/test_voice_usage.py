"""A member's transcribed voice messages in `/personal usage` (the real bot, the fake
Discord): counted today and in the period with their minutes, only the member's own;
nothing said when none were transcribed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.capabilities.voice.storage import VoiceTranscript
from tests.support.drive_commands import command, member, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord

SEND = str((1 << 10) | (1 << 11))  # View Channel and Send Messages


def transcript(attachment_id: int, user_id: int, seconds: float, created_at: datetime) -> VoiceTranscript:
    return VoiceTranscript(attachment_id=attachment_id, message_id=attachment_id + 1, user_id=user_id,
                           guild_id=None, words="words", seconds=seconds, created_at=created_at)


async def test_personal_usage_counts_the_members_transcribed_voice_messages(fake_discord: FakeDiscord,
                                                                          bot_factory) -> None:
    fake, bot = fake_discord, bot_factory()
    alice, bob = member(fake, "alice"), member(fake, "bob")
    now = datetime.now(UTC)
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "personal", sub("usage"), user=alice, permissions=SEND)
        async with bot.sessions() as session, session.begin():
            session.add_all([transcript(1, int(alice["id"]), 45.0, now),
                             transcript(3, int(alice["id"]), 75.0, now - timedelta(days=3)),
                             transcript(5, int(alice["id"]), 600.0, now - timedelta(days=40)),  # past the period
                             transcript(7, int(bob["id"]), 30.0, now)])
        after = await command(run, fake, "personal", sub("usage"), user=alice, permissions=SEND)
        japanese = await command(run, fake, "personal", sub("usage"), user=alice, permissions=SEND, locale="ja")
    assert "Voice messages" not in before.content
    assert after.content.endswith("\nVoice messages transcribed: 1 today, 2 in 30 days (2.0 min)")
    assert japanese.content.endswith("\n文字起こししたボイスメッセージ: 今日 1 件、30 日間で 2 件（2.0 分）")
