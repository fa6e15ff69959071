"""Shutting `python -m bot` down with SIGTERM (what `docker compose stop` sends) while an
answer streams: the answer's final edit lands, the process exits 0 in time."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from providers.i18n import t
from tests.discord.test_chat_e2e import ask, env_for
from tests.support.check_answers import INDICATOR, answer_messages
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_discord_client import bot_process
from tests.support.fake_discord_server import FakeDiscord
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
