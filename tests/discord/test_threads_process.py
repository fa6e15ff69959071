"""Threads through the real `python -m bot` against the fake Discord and the replay provider:
a manager turns threads on, a mention opens a thread, and a follow-up without a mention is
answered with the thread's history (asserted on the request body the provider received)."""

from __future__ import annotations

from pathlib import Path

from providers.i18n import t
from tests.support.check_answers import INDICATOR
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import bot_process
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


def done(fake: FakeDiscord, channel_id: str, count: int) -> bool:
    found = [m for m in fake.bot_messages(channel_id) if m.content]
    return len(found) >= count and not any(INDICATOR in m.content for m in found)


async def test_threads_on_a_mention_opens_a_thread_and_a_follow_up_continues_it(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(responses_stream("Paris is the capital of France.", piece=7),  # OpenAI: the Responses API
                   responses_stream("About 2.1 million people.", piece=7))
    env = {"DEFAULT_TEXT_PROVIDER": "openai", "DEFAULT_TEXT_MODEL": "fake-model",
           "DEFAULT_TEXT_BASE_URL": f"{server.url}/v1", "DEFAULT_TEXT_API_KEYS": "sk-e2e-first"}
    async with bot_process(fake, env, tmp_path) as run:
        switched = await command(run, fake, "settings", sub("threads", opt("enabled", True)))
        question = await fake.send_user_message(f"<@{fake.bot_user['id']}> what is the capital of France?",
                                                mention_bot=True)
        await run.wait_for(lambda: done(fake, question.id, 1), timeout=30)
        await fake.send_user_message("and how many people live there?", channel_id=question.id)
        await run.wait_for(lambda: done(fake, question.id, 2), timeout=30)
    assert switched.content == t("commands.reply.threads_on", "en")
    thread = fake.thread_of(question.id)
    assert (thread["name"], thread["owner_id"], thread["type"]) == (
        "what is the capital of France?", fake.bot_user["id"], 11)
    assert [m.content for m in fake.bot_messages(question.id) if m.content] == [
        "Paris is the capital of France.", "About 2.1 million people."]
    assert [m for m in fake.bot_messages(fake.channel_id) if m.webhook_token is None] == []
    first, follow_up = server.requests
    assert first.json["input"] == [{"role": "user", "content": "Alice: what is the capital of France?"}]
    assert follow_up.json["input"] == [
        {"role": "user", "content": "Alice: what is the capital of France?"},
        {"role": "assistant", "content": "Paris is the capital of France."},
        {"role": "user", "content": "Alice: and how many people live there?"}]
    assert run.process.returncode == 0, run.log()  # closed cleanly on SIGINT
