"""Voice messages through the real LLMBot against the fake Discord: a voice message (the
real flag and attachment shape) reaches Gemini as inline audio; on a text-only route it is
transcribed through the SDK's multipart body, shown in a quote line above the answer and
kept, so a later question's history holds its words; past the bounds, not audio, or with
no voice set up, the member reads one line and nothing is sent.

Every test ends with no Discord 429."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from sqlalchemy import select

from bot.capabilities.voice.storage import VoiceTranscript
from providers.i18n import t
from tests.capabilities.voice.fakes import (
    VOICE_FLAG,
    FakeTranscriber,
    GeminiAudioRules,
    ogg_recording,
    voice_file,
)
from tests.support.data_gemini import g_chunk, gemini_body
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord, StoredMessage
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.turn.test_provider_rules_turn import default_route

WORDS = "what is the tallest mountain in japan"


def shown(fake: FakeDiscord, channel_id: str | None = None) -> list[StoredMessage]:
    return [m for m in fake.bot_messages(channel_id, ephemeral=False) if m.content and not m.deleted]


def lines(fake: FakeDiscord, channel_id: str | None = None) -> list[str]:
    return [m.content for m in shown(fake, channel_id)]


def user_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))


async def send_voice(fake: FakeDiscord, **options: Any) -> StoredMessage:
    files = options.pop("files", None) or [voice_file()]
    return await fake.send_user_message("", files=files, flags=VOICE_FLAG, **options)


def transcribing(transcriber: FakeTranscriber, key: str = "sk-voice") -> dict[str, str]:
    return {"DEFAULT_TRANSCRIBE_PROVIDER": "custom", "DEFAULT_TRANSCRIBE_MODEL": "whisper-1",
            "DEFAULT_TRANSCRIBE_BASE_URL": transcriber.url, "DEFAULT_TRANSCRIBE_API_KEYS": key}


@pytest.fixture
async def transcriber():
    async with FakeTranscriber(keys=frozenset({"sk-voice"})) as fake:
        yield fake


async def test_a_voice_message_reaches_gemini_as_inline_audio(fake_discord: FakeDiscord, turn_bot) -> None:
    fake = fake_discord
    async with ProviderReplayServer(rules=[GeminiAudioRules()]) as server:
        server.reply(Reply(body=gemini_body([g_chunk([{"text": "Mount Fuji."}], "STOP")])))
        bot = turn_bot(**default_route(server, "google", "gemini-2.5-flash"))
        async with running_bot(fake, bot) as run:
            await send_voice(fake, dm=True)
            await run.wait_for(lambda: "Mount Fuji." in lines(fake, fake.dm_channel_id), timeout=15)
        [request] = server.requests
    parts = request.json["contents"][-1]["parts"]
    audio = {"inlineData": {"mimeType": "audio/ogg", "data": base64.b64encode(ogg_recording()).decode()}}
    assert audio in parts
    assert not any(line.startswith("> -# ") for line in lines(fake, fake.dm_channel_id))  # nothing transcribed
    assert fake.rate_limited == []


async def test_a_text_route_gets_the_transcript_shown_above_the_answer_and_kept_for_history(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        transcriber: FakeTranscriber) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Hello."), openai_stream("Mount Fuji."),
                   openai_stream("3,776 metres."))
    bot = turn_bot(**default_route(server, "custom", "model-a", "/v1"), **transcribing(transcriber))
    async with running_bot(fake, bot) as run:
        await fake.send_user_message(f"<@{fake.bot_user['id']}> hi", mention_bot=True)
        await run.wait_for(lambda: "Hello." in lines(fake), timeout=15)
        hello = next(m for m in shown(fake) if m.content == "Hello.")
        voice = await send_voice(fake, reply_to=hello.id)  # a voice message replying to the bot
        await run.wait_for(lambda: "Mount Fuji." in lines(fake), timeout=15)
        quote = next(m for m in shown(fake) if m.content.startswith("> -# "))
        answer = next(m for m in shown(fake) if m.content == "Mount Fuji.")

        async def kept() -> list[VoiceTranscript]:
            async with bot.sessions() as session:
                return list(await session.scalars(select(VoiceTranscript)))

        for _ in range(100):
            if await kept():
                break
            await asyncio.sleep(0.05)
        await fake.send_user_message("how tall is it?", reply_to=answer.id)
        await run.wait_for(lambda: "3,776 metres." in lines(fake), timeout=15)
        [row] = await kept()
    [taken] = transcriber.taken  # the later question did not transcribe again
    assert (taken.model, taken.filename, taken.content_type) == ("whisper-1", "voice-message.ogg", "audio/ogg")
    assert taken.data == ogg_recording() and taken.response_format == "json"
    assert taken.authorization == "Bearer sk-voice"
    assert quote.content == "> -# " + t("chat.voice.transcript", "en", words=WORDS)
    assert int(quote.id) < int(answer.id) and quote.message_reference["message_id"] == voice.id
    second = server.requests[1].json
    assert f"(transcribed) {WORDS}" in user_text(second["messages"][-1])
    assert "input_audio" not in str(second) and "audio/ogg" not in str(second)
    third = server.requests[2].json
    assert f"(transcribed) {WORDS}" in str(third["messages"])  # the history holds the words
    assert "audio/ogg" not in str(third)
    assert (row.words, row.seconds, row.message_id, row.user_id) == (WORDS, 3.5, int(voice.id),
                                                                      int(fake.member_user["id"]))
    assert fake.rate_limited == []


@pytest.mark.parametrize(("file", "note"), [
    (voice_file(seconds=301), lambda: t("chat.voice.too_long", "en", seconds=300)),
    (voice_file(size=9 * 1024 * 1024), lambda: t("chat.voice.too_large", "en", voice_megabytes=8)),
])
async def test_a_voice_message_past_the_bounds_gets_a_note_and_nothing_is_sent(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        transcriber: FakeTranscriber, file, note) -> None:
    fake, server = fake_discord, provider_server
    bot = turn_bot(**default_route(server, "custom", "model-a", "/v1"), **transcribing(transcriber))
    async with running_bot(fake, bot) as run:
        await send_voice(fake, dm=True, files=[file])
        await run.wait_for(lambda: any(note() in line for line in lines(fake, fake.dm_channel_id)), timeout=15)
        await asyncio.sleep(0.3)
    assert server.requests == [] and transcriber.taken == []
    assert fake.downloads == []  # refused from Discord's metadata, before any byte
    assert fake.rate_limited == []


async def test_a_voice_message_that_is_not_audio_gets_a_note_and_is_not_transcribed(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        transcriber: FakeTranscriber) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("I could not hear it."))
    bot = turn_bot(**default_route(server, "custom", "model-a", "/v1"), **transcribing(transcriber))
    async with running_bot(fake, bot) as run:
        await send_voice(fake, dm=True, files=[voice_file(data=b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(64))])
        await run.wait_for(lambda: "I could not hear it." in lines(fake, fake.dm_channel_id), timeout=15)
    note = t("chat.voice.not_audio", "en", name="voice-message.ogg")
    assert any(note in line for line in lines(fake, fake.dm_channel_id))
    assert transcriber.taken == []
    assert "the voice message is not audio" in user_text(server.requests[0].json["messages"][-1])
    assert fake.rate_limited == []


async def test_without_any_voice_set_up_the_member_reads_one_line(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    bot = turn_bot(**default_route(server, "custom", "model-a", "/v1"))  # text only, no transcription
    async with running_bot(fake, bot) as run:
        await send_voice(fake, dm=True)
        note = t("chat.voice.not_set_up", "en")
        await run.wait_for(lambda: any(note in line for line in lines(fake, fake.dm_channel_id)), timeout=15)
        await asyncio.sleep(0.3)
    assert server.requests == []
    assert len(lines(fake, fake.dm_channel_id)) == 1
    assert fake.rate_limited == []


async def test_a_failed_transcription_is_said_and_the_key_never_shown(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, caplog) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Sorry, I could not hear that."))
    async with FakeTranscriber(keys=frozenset({"sk-voice"})) as transcriber:
        bot = turn_bot(**default_route(server, "custom", "model-a", "/v1"),
                       **transcribing(transcriber, key="sk-wrong-key-9876"))
        async with running_bot(fake, bot) as run:
            await send_voice(fake, dm=True)
            await run.wait_for(lambda: "Sorry, I could not hear that." in lines(fake, fake.dm_channel_id),
                               timeout=15)
    assert t("chat.voice.not_transcribed", "en") in "\n".join(lines(fake, fake.dm_channel_id))
    assert "cannot hear" in user_text(server.requests[0].json["messages"][-1])
    assert "status 401" in caplog.text and "sk-wrong-key" not in caplog.text
    assert fake.rate_limited == []


async def test_a_voice_message_in_a_server_that_does_not_reply_to_the_bot_is_not_for_it(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        transcriber: FakeTranscriber) -> None:
    """A voice message carries no text, so no mention: in a server only a reply to the bot
    (or a bot thread, a listen channel) addresses it."""
    fake, server = fake_discord, provider_server
    bot = turn_bot(**default_route(server, "custom", "model-a", "/v1"), **transcribing(transcriber))
    async with running_bot(fake, bot):
        await send_voice(fake)
        await asyncio.sleep(0.5)
    assert server.requests == [] and transcriber.taken == [] and lines(fake) == []
    assert fake.downloads == []
    assert fake.rate_limited == []
