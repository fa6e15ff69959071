"""A member's back-to-back messages with files, and an answer stopped while its files are
read, through the real LLMBot against the fake Discord (which counts each attachment's
downloads) and the replay provider, with real reader processes.

- Five messages joined into one question download and read each file once (each batch
  used to download every earlier message's files again: 15 downloads).
- An answer stopped while its preparation reads a hostile PDF stops reading at once: its
  reader process is killed, the member's next question (the cap holds one answer) has
  its document read right away, and the stopped question's other file is never fetched.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bot.capabilities.listening.settings import LISTENING
from bot.repo.capability_settings import set_values
from tests.capabilities.answer_controls.test_answer_controls import (
    answer_parts,
    answering,
    ask,
    request_texts,
)
from tests.capabilities.reading.attachments.document_fixtures import pdf_bytes
from tests.capabilities.reading.attachments.hostile_files import form_bomb_pdf
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command
from tests.support.fake_discord_server import FakeDiscord, UserFile
from tests.support.fake_provider_server import ProviderReplayServer


def text_file(n: int) -> UserFile:
    return UserFile(f"part{n}.txt", f"contents of file number {n}".encode(), "text/plain")


async def test_five_joined_messages_download_and_read_each_file_once(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("One answer to all five.", first_byte_delay=3.0))
    async with answering(fake, server, turn_bot) as (bot, run):
        sent = []
        for n in range(5):
            sent.append(await ask(fake, f"message {n}", files=[text_file(n)]))
            await asyncio.sleep(0.5)
        await run.wait_for(lambda: any(m.content == "One answer to all five." for m in answer_parts(fake)),
                           timeout=15)
    attachment_ids = [m.attachments[0]["id"] for m in sent]
    assert sorted(fake.downloads) == sorted(attachment_ids)  # 5, not 1 + 2 + 3 + 4 + 5 = 15
    last = request_texts(server.requests[-1])[-1]
    assert all(f"contents of file number {n}" in last for n in range(5))


async def test_a_stopped_answer_stops_reading_and_the_next_question_is_read_at_once(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Read it."))
    bot_options: dict[str, Any] = {"READER_PROCESSES": "1", "READER_SECONDS": "30", "MAX_ANSWERS_PER_MEMBER": "1"}
    async with answering(fake, server, lambda: turn_bot(**bot_options)) as (bot, run):
        async with bot.sessions() as session, session.begin():
            await set_values(session, int(fake.guild_id), LISTENING, {"batch_seconds": 0})  # the next message follows, not joins
        first = await ask(fake, "what is in these?", files=[
            UserFile("bomb.pdf", form_bomb_pdf(), "application/pdf"), text_file(1)])
        await run.wait_for(lambda: first.attachments[0]["id"] in fake.downloads)
        await asyncio.sleep(1.0)  # the bomb is in the only reader process now
        await command(run, fake, "stop", permissions="0", user=fake.member_user)
        stopped = time.monotonic()
        await ask(fake, "and this one?", files=[UserFile("second.pdf", pdf_bytes(["second document text"]),
                                                         "application/pdf")])
        await run.wait_for(lambda: any(m.content == "Read it." for m in answer_parts(fake)), timeout=20)
        took = time.monotonic() - stopped
        await asyncio.sleep(0.5)
    assert took < 6, f"the next question waited {took:.1f} s for the stopped one's reader"
    assert "second document text" in request_texts(server.requests[-1])[-1]
    assert first.attachments[1]["id"] not in fake.downloads  # the stopped question read no further
    assert len(server.requests) == 1
