"""A DM continues without replies only within half an hour: the real LLMBot against the
fake Discord and the replay provider. discord.py reads a message's time from its id, so
the fake's ids jump ahead (`skip_ahead`) instead of anyone waiting."""

from __future__ import annotations

from typing import Any

from tests.support.check_answers import INDICATOR
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord, skip_ahead
from tests.support.fake_provider_server import ProviderReplayServer

MINUTE = 60.0


def answered(fake: FakeDiscord, count: int) -> bool:
    found = [m for m in fake.bot_messages(fake.dm_channel_id) if m.content]
    return len(found) >= count and not any(INDICATOR in m.content for m in found)


def turns(request) -> list[dict[str, Any]]:
    return [m for m in request.json["messages"] if m["role"] != "system"]


async def test_a_dm_follow_up_has_the_history_within_30_minutes_and_not_after(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Noted: 7.", piece=4), openai_stream("It was 7.", piece=4),
                   openai_stream("Which number?", piece=4))
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="dm-model",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-operator-1")
    async with running_bot(fake, bot) as run:
        await fake.send_user_message("remember the number 7", dm=True)
        await run.wait_for(lambda: answered(fake, 1))
        skip_ahead(29 * MINUTE)
        await fake.send_user_message("which number was it?", dm=True)
        await run.wait_for(lambda: answered(fake, 2))
        skip_ahead(31 * MINUTE)  # 31 minutes after the last exchange
        await fake.send_user_message("and now?", dm=True)
        await run.wait_for(lambda: answered(fake, 3))
    assert turns(server.requests[1]) == [
        {"role": "user", "content": "remember the number 7"},
        {"role": "assistant", "content": "Noted: 7."},
        {"role": "user", "content": "which number was it?"}]
    assert turns(server.requests[2]) == [{"role": "user", "content": "and now?"}]


async def test_the_window_counts_from_the_follow_up_not_from_the_first_message(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """An exchange older than 30 minutes drops out while a newer one stays."""
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("One.", piece=4), openai_stream("Two.", piece=4), openai_stream("Three.", piece=4))
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="dm-model",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-operator-1")
    async with running_bot(fake, bot) as run:
        await fake.send_user_message("first", dm=True)
        await run.wait_for(lambda: answered(fake, 1))
        skip_ahead(20 * MINUTE)
        await fake.send_user_message("second", dm=True)
        await run.wait_for(lambda: answered(fake, 2))
        skip_ahead(20 * MINUTE)  # "first" is now 40 minutes old, "second" 20
        await fake.send_user_message("third", dm=True)
        await run.wait_for(lambda: answered(fake, 3))
    assert [m["content"] for m in turns(server.requests[2])] == ["second", "Two.", "third"]
