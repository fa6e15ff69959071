"""End to end: `python -m bot`, configured only by environment variables, against the fake
Discord and the replay provider server. Each test starts a real bot process (~2 s)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.repo import set_thought_log_channel
from tests.support.check_answers import (
    INDICATOR,
    answer_messages,
    assert_delivered,
    assert_no_pings,
    delivered,
)
from tests.support.data_openai import long_answer_with_code, openai_stream
from tests.support.data_openai_responses import responses_midstream_error, responses_stream
from tests.support.drive_discord_client import bot_process
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


def env_for(server: ProviderReplayServer, provider: str = "openai") -> dict[str, str]:
    return {"DEFAULT_TEXT_PROVIDER": provider, "DEFAULT_TEXT_MODEL": "fake-model",
            "DEFAULT_TEXT_BASE_URL": f"{server.url}/v1",
            "DEFAULT_TEXT_API_KEYS": "sk-e2e-first, sk-e2e-second", "LOG_LEVEL": "INFO"}


async def ask(fake: FakeDiscord, text: str):
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True)


async def test_fast_6000_character_answer_with_code_and_mentions(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    fake = fake_discord
    text = long_answer_with_code().replace("The end is near,", "@everyone @here <@&1234> <@5678> the end is near,", 1)
    provider_server.reply(responses_stream(text, piece=30))  # OpenAI speaks the Responses API
    async with bot_process(fake, env_for(provider_server), tmp_path) as run:
        question = await ask(fake, "write a long answer")
        await run.wait_for(lambda: delivered(fake, text), timeout=60)
    messages = assert_delivered(fake, text)
    assert len(messages) >= 3 and all(len(m.content) <= 2000 for m in messages)
    assert any(m.content.startswith("```python\n") for m in messages[1:])
    assert messages[0].message_reference["message_id"] == question.id
    assert fake.rate_limited == []
    assert assert_no_pings(fake) >= len(messages)
    assert "@everyone" in "".join(m.content for m in messages)  # shown, but pings nobody
    [request] = provider_server.requests
    assert request.api_key == "sk-e2e-first"
    assert request.path == "/v1/responses" and request.json["instructions"]  # the system prompt
    assert request.json["input"] == [{"role": "user", "content": "Alice: write a long answer"}]
    assert fake.typing and fake.typing[0][1] <= messages[0].created_at
    assert run.process.returncode == 0, run.log()  # closed cleanly on SIGINT


SLOW = pytest.mark.skipif(os.environ.get("SKIP_SLOW_TESTS") == "1", reason="SKIP_SLOW_TESTS=1")


@SLOW
async def test_slow_20_second_stream_edits_steadily_without_429(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    """SLOW (about 25 s): 200 events 0.1 s apart, the pace of a slow model."""
    fake = fake_discord
    text = " ".join(f"token{i:03d}" for i in range(240))  # 2,160 characters
    provider_server.reply(responses_stream(text, piece=11, event_delay=0.1))
    async with bot_process(fake, env_for(provider_server), tmp_path) as run:
        await ask(fake, "take your time")
        await run.wait_for(lambda: delivered(fake, text), timeout=60)
    messages = assert_delivered(fake, text)
    assert fake.rate_limited == []
    updates = sorted([m.created_at for m in messages] + [t for m in messages for t in m.edit_times])
    assert len(updates) >= 10, f"only {len(updates)} updates in 20 seconds"
    streaming = updates[:-1]  # the last update is the final edit after the stream ended
    gaps = [b - a for a, b in zip(streaming, streaming[1:], strict=False)]
    assert max(gaps) < 4.0, f"an edit gap of {max(gaps):.1f}s"
    for m in messages:  # each edit only ever extends what readers already saw
        shown = [h.replace(INDICATOR, "").strip() for h in m.history]
        assert all(b.startswith(a) for a, b in zip(shown, shown[1:], strict=False))


async def test_reasoning_and_think_blocks_never_appear_but_reach_the_thought_log(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    fake = fake_discord
    database = tmp_path / "bot.sqlite3"
    engine = create_engine(f"sqlite+aiosqlite:///{database}")
    try:
        await migrate.upgrade(engine)
        async with session_factory(engine)() as session, session.begin():
            await set_thought_log_channel(session, int(fake.guild_id), int(fake.thought_channel_id))
    finally:
        await engine.dispose()
    visible = "The answer is 42, and here is why it holds."
    content = "<think>SECRET-INLINE plan: answer briefly</think>" + visible
    provider_server.reply(openai_stream(content, piece=9,
                                        reasoning=["SECRET-REASONING first ", "weigh options"]))
    async with bot_process(fake, env_for(provider_server, "deepseek"), tmp_path) as run:
        await ask(fake, "why 42?")
        await run.wait_for(lambda: delivered(fake, visible))
        await run.wait_for(lambda: bool(fake.bot_messages(fake.thought_channel_id)))
    for m in fake.bot_messages(fake.channel_id):
        for version in m.history:
            assert "SECRET" not in version and "think>" not in version
    [log_post] = fake.bot_messages(fake.thought_channel_id)
    [embed] = log_post.embeds
    assert "SECRET-REASONING first weigh options" in embed["description"]
    assert "SECRET-INLINE plan" in embed["description"]
    assert embed["footer"]["text"] == "Provider: deepseek"


async def test_deleted_message_continues_in_a_new_one_without_losing_text(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    fake = fake_discord
    text = " ".join(f"piece{i}" for i in range(250))
    provider_server.reply(responses_stream(text, piece=10, event_delay=0.012))
    async with bot_process(fake, env_for(provider_server), tmp_path) as run:
        await ask(fake, "go")
        await run.wait_for(lambda: bool(answer_messages(fake)))
        first = answer_messages(fake)[0]
        await fake.delete_message(first.id)  # a moderator deletes it mid-stream
        await run.wait_for(lambda: delivered(fake, text), timeout=30)
    messages = assert_delivered(fake, text)
    assert first.deleted and first not in messages
    assert fake.count("PATCH", rf"/messages/{first.id}$") >= 1  # an edit was answered 404
    assert fake.rate_limited == []


async def test_error_after_partial_text_keeps_it_marked_interrupted(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    fake = fake_discord
    partial = "Here is the beginning of a careful answer, and then the provider fails."
    provider_server.reply(responses_midstream_error(partial, piece=12))
    async with bot_process(fake, env_for(provider_server), tmp_path) as run:
        await ask(fake, "fail halfway")
        await run.wait_for(lambda: any(m.embeds for m in fake.bot_messages(fake.channel_id)))
        await run.wait_for(lambda: any("interrupted" in m.content for m in answer_messages(fake)))
    [answer] = answer_messages(fake)
    assert answer.content.startswith(partial)
    assert answer.content.endswith("*The response was interrupted by an error.*")
    [error_post] = [m for m in fake.bot_messages(fake.channel_id) if m.embeds]
    assert error_post.embeds[0]["title"]
    assert "sk-e2e" not in str(error_post.embeds)  # no key in the embed
    assert fake.rate_limited == []
