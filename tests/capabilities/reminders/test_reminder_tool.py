"""The `set_reminder` tool through the real bot: the fake provider asks for it, the
reminder is stored for the asker in the question's channel, the answer's note line says
so, and it is delivered there; a refusal goes back to the model as the tool's error and
stores nothing."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from bot.capabilities.reminders.storage import pending_of
from bot.db.models_reminders import Reminder
from tests.support.data_openai import chunk, openai_stream, tool_delta
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply


def set_reminder_call(when: str, text: str) -> Reply:
    return Reply.sse([chunk({"role": "assistant", "content": ""}),
                      chunk({"tool_calls": [tool_delta(0, id="call_1", name="set_reminder",
                                                       arguments=json.dumps({"when": when, "text": text}))]}),
                      chunk({}, "tool_calls")])


def answers(fake: FakeDiscord) -> list[str]:
    return [m.content for m in fake.bot_messages(fake.channel_id, ephemeral=False)
            if m.content and m.webhook_token is None and "Reminder:" not in m.content]


async def test_the_model_sets_a_reminder_for_the_asker_here(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    member = int(fake.member_user["id"])
    server.enqueue(set_reminder_call("in 3 seconds", "stretch"), openai_stream("I will remind you."))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> remind me in 3 seconds to stretch", mention_bot=True)
        await run.wait_for(lambda: any("-# reminder set for" in line for line in answers(fake)), timeout=10)
        async with bot.sessions() as session:
            [held] = await pending_of(session, member)
        [answer] = [line for line in answers(fake) if line.startswith("I will remind you.")]
        assert answer.endswith(" (UTC)") and "\n\n-# reminder set for " in answer
        await run.wait_for(lambda: any("Reminder: stretch" in m.content for m in fake.bot_messages(fake.channel_id)),
                           timeout=8)
    first, second = server.requests[:2]
    assert "set_reminder" in [tool["function"]["name"] for tool in first.json["tools"]]
    [result] = [m for m in second.json["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"])["result"].startswith("Reminder set for ")
    assert (held.user_id, held.guild_id, held.channel_id, held.text) == (
        member, int(fake.guild_id), int(fake.channel_id), "stretch")
    [sent] = [m for m in fake.bot_messages(fake.channel_id) if "Reminder: stretch" in m.content]
    assert sent.allowed_mentions == {"parse": [], "users": [member]}
    assert fake.rate_limited == []


async def test_a_refusal_is_the_tools_error_and_nothing_is_set(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(set_reminder_call("yesterday-ish", "stretch"), openai_stream("Sorry, which time?"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> remind me sometime", mention_bot=True)
        await run.wait_for(lambda: "Sorry, which time?" in answers(fake), timeout=10)
        async with bot.sessions() as session:
            count = await session.scalar(select(func.count()).select_from(Reminder))
    [result] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    error = json.loads(result["content"])["error"]
    assert error["type"] == "tool_error" and error["message"].startswith("I could not read that time. Try: in 10")
    assert count == 0
    assert not any("reminder set" in line for line in answers(fake))


async def test_a_question_that_asks_for_no_reminder_carries_no_reminder_tool(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Only a question that may ask for a reminder pays for the tool's schema."""
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Paris."))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> what is the capital of France?", mention_bot=True)
        await run.wait_for(lambda: any(line.startswith("Paris.") for line in answers(fake)), timeout=10)
    assert "set_reminder" not in [tool["function"]["name"] for tool in server.requests[0].json["tools"]]
