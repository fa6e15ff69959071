"""Shutting `python -m bot` down with SIGTERM (what `docker compose stop` sends) while an
answer streams: the answer's final edit lands, the process exits 0 in time; and while a
reader process reads a hostile file: the process and its readers end in time."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from providers.i18n import t
from tests.capabilities.reading.attachments.hostile_files import form_bomb_pdf
from tests.discord.test_chat_e2e import ask, env_for
from tests.support.check_answers import INDICATOR, answer_messages
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_discord_client import bot_process
from tests.support.fake_discord_server import FakeDiscord, UserFile
from tests.support.fake_provider_server import ProviderReplayServer


async def test_sigterm_finishes_answers_in_flight_and_exits_0(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    fake = fake_discord
    text = " ".join(f"word{i}" for i in range(2000))
    provider_server.reply(responses_stream(text, piece=12, event_delay=0.05))  # about 40 s if left alone (OpenAI)
    async with bot_process(fake, env_for(provider_server), tmp_path) as run:
        await ask(fake, "a long one please")
        await run.wait_for(lambda: bool(answer_messages(fake)) and "word30" in answer_messages(fake)[0].content)
        started = time.monotonic()
        run.process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(run.process.wait(), 15)
        took = time.monotonic() - started
    assert code == 0, run.log()
    assert took < 10, f"shutdown took {took:.1f} s"
    [answer] = answer_messages(fake)
    assert INDICATOR not in answer.content
    assert answer.content.endswith(f"*{t('chat.bot_restarting', 'en')}*")
    said = answer.content.rsplit("\n\n", 1)[0]
    assert text.startswith(said) and "word30" in said
    assert "Traceback" not in run.log() and "Session is closed" not in run.log()


def reader_processes(parent: int) -> list[int]:
    """The reader processes (`python -m bot.readers.child`) `parent` started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(") ", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"bot.readers.child" in command:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def test_sigterm_ends_the_process_in_time_while_a_reader_reads_a_hostile_pdf(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    """A thread reading a form-bomb PDF kept the process alive long after SIGTERM; a reader
    process is killed with the bot."""
    fake = fake_discord
    provider_server.reply(responses_stream("never asked"))
    env = {**env_for(provider_server), "READER_SECONDS": "120", "READER_PROCESSES": "1"}
    async with bot_process(fake, env, tmp_path) as run:
        readers = reader_processes(run.process.pid)
        assert len(readers) == 1, run.log()  # started with the bot
        await fake.send_user_message(f"<@{fake.bot_user['id']}> what is in it?", mention_bot=True,
                                     files=[UserFile("bomb.pdf", form_bomb_pdf(), "application/pdf")])
        await asyncio.sleep(2.0)  # downloaded, and in the reader process
        started = time.monotonic()
        run.process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(run.process.wait(), 30)
        took = time.monotonic() - started
    assert code == 0, run.log()
    assert took < 10, f"shutdown took {took:.1f} s"
    assert not any(running(pid) for pid in readers)
    assert provider_server.requests == []  # the question never reached the model
    assert "Traceback" not in run.log()
