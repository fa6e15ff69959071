"""Conversations through the real LLMBot, the fake Discord and the replay provider: the
request bodies the provider received show what history the model was given.

A reply to any part of a split answer continues the whole answer (also after a
restart); members' names ride on their turns; the server's history depth cuts the chain
with a note; a DM continues without replies; a keyless custom endpoint gets no
Authorization header; an empty pool and a resting pool say different things.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot import repo
from bot.repo.conversation import answer_of
from providers.i18n import t
from tests.support.check_answers import INDICATOR, answer_messages, delivered
from tests.support.data_anthropic import a_text_block, anthropic_events
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import configure_server, server_keys
from tests.support.fake_discord_server import FakeDiscord, StoredMessage
from tests.support.fake_provider_server import ProviderReplayServer, Reply

NOTICE = "-# "


def paragraph(n: int, length: int = 1490) -> str:
    words = " ".join(f"p{n}w{i}" for i in range(400))
    return words[:length].rsplit(" ", 1)[0] + "."


LONG_ANSWER = "\n\n".join(paragraph(n) for n in range(4))


def texts(fake: FakeDiscord, channel_id: str | None = None) -> list[StoredMessage]:
    """The bot's answer messages (notices left out) in a channel."""
    channel = channel_id or fake.channel_id
    return [m for m in fake.bot_messages(channel) if not m.deleted and m.content and not m.embeds
            and not m.content.startswith(NOTICE) and m.webhook_token is None]


def notices(fake: FakeDiscord) -> list[str]:
    return [m.content for m in answer_messages(fake) if m.content.startswith(NOTICE)]


def finished(fake: FakeDiscord, count: int, channel_id: str | None = None) -> bool:
    found = texts(fake, channel_id)
    return len(found) >= count and not any(INDICATOR in m.content for m in found)


async def ask(fake: FakeDiscord, text: str, **options: Any) -> StoredMessage:
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, **options)


async def recorded(bot, message_id: str) -> None:
    async with bot.sessions() as session:
        assert await answer_of(session, int(message_id)) is not None


# The answer is recorded when its turn ends, which can be a whole window after its last
# message shows: discord.py holds the request that empties a channel's bucket until the
# bucket resets (5 s). An edit returns once Discord answered (bot/edge/answered.py),
# but a send, whose message the turn needs, waits for discord.py.
RECORDED_WITHIN = 15.0


def openai_turns(request) -> list[dict[str, Any]]:
    """The conversation turns of an OpenAI-format request (the system prompt left out)."""
    return [m for m in request.json["messages"] if m["role"] != "system"]


async def test_a_reply_to_any_part_continues_the_whole_answer_also_after_a_restart(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    assert 5900 < len(LONG_ANSWER) < 6100
    server.enqueue(openai_stream(LONG_ANSWER, piece=500))
    server.reply(openai_stream("About that part.", piece=8))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "tell me a long story")
        await run.wait_for(lambda: delivered(fake, LONG_ANSWER), timeout=20)
        parts = texts(fake)
        assert len(parts) == 4
        await eventually(lambda: recorded(bot, parts[0].id), timeout=RECORDED_WITHIN)
        await fake.send_user_message("what did the third part mean?", reply_to=parts[2].id)
        await run.wait_for(lambda: finished(fake, 5))
    whole = "\n".join(p.content for p in parts)
    expected = [{"role": "user", "content": "tell me a long story", "name": "Alice"},
                {"role": "assistant", "content": whole},
                {"role": "user", "content": "what did the third part mean?", "name": "Alice"}]
    assert openai_turns(server.requests[1]) == expected
    assert all(f"p{n}w1 " in whole for n in range(4))

    restarted = turn_bot()  # a new process on the same database: the parts are still known
    async with running_bot(fake, restarted) as run:
        await fake.send_user_message("and the last one?", reply_to=parts[3].id)
        await run.wait_for(lambda: finished(fake, 6))
    assert openai_turns(server.requests[2]) == [
        *expected[:2], {"role": "user", "content": "and the last one?", "name": "Alice"}]


async def test_a_reply_the_moment_an_answer_shows_carries_all_of_it(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Streamed in small pieces, the answer's last part is on screen while discord.py still
    holds the send that made it (the channel's bucket is empty for up to 5 s), so the
    answer did not know that part yet: a reply to part 3 then carried parts 1-3 only."""
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream(LONG_ANSWER, piece=40, event_delay=0.005))
    server.reply(openai_stream("About that part.", piece=8))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "tell me a long story")
        await run.wait_for(lambda: delivered(fake, LONG_ANSWER), timeout=30)
        parts = texts(fake)
        assert len(parts) == 4
        await fake.send_user_message("what did the third part mean?", reply_to=parts[2].id)
        await run.wait_for(lambda: finished(fake, 5), timeout=30)
    assert openai_turns(server.requests[1]) == [
        {"role": "user", "content": "tell me a long story", "name": "Alice"},
        {"role": "assistant", "content": LONG_ANSWER},  # as it streamed: every part, its own breaks
        {"role": "user", "content": "what did the third part mean?", "name": "Alice"}]


async def test_two_members_in_a_chain_are_named_in_the_openai_name_field(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("An answer.", piece=5))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "first question")
        await run.wait_for(lambda: finished(fake, 1))
        await eventually(lambda: recorded(bot, texts(fake)[0].id), timeout=RECORDED_WITHIN)
        await ask(fake, "my turn", author=fake.owner, reply_to=texts(fake)[0].id)
        await run.wait_for(lambda: finished(fake, 2))
    assert openai_turns(server.requests[1]) == [
        {"role": "user", "content": "first question", "name": "Alice"},
        {"role": "assistant", "content": "An answer."},
        {"role": "user", "content": "my turn", "name": "Owner"}]


def anthropic_reply(text: str) -> Reply:
    return Reply.named_sse(anthropic_events([a_text_block(0, [text])], "end_turn", 5))


async def test_two_members_in_a_chain_are_named_by_a_prefix_for_anthropic(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(anthropic_reply("Claude here."))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_text_model(session, int(fake.guild_id), "anthropic", "claude-test")
            await repo.add_server_key(session, bot.vault, int(fake.guild_id), "anthropic", "sk-ant-server-1")
        await ask(fake, "hello there")
        await run.wait_for(lambda: finished(fake, 1))
        await eventually(lambda: recorded(bot, texts(fake)[0].id), timeout=RECORDED_WITHIN)
        await ask(fake, "and me", author=fake.owner, reply_to=texts(fake)[0].id)
        await run.wait_for(lambda: finished(fake, 2))
    assert server.requests[1].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Alice: hello there"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Claude here."}]},
        {"role": "user", "content": [{"type": "text", "text": "Owner: and me"}]}]


async def test_a_chain_longer_than_the_history_depth_is_cut_with_a_note(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    for n in range(3):
        server.enqueue(openai_stream(f"Answer {n}.", piece=5))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        set_depth = await command(run, fake, "settings", sub("history", opt("messages", 2)))
        assert set_depth.content == t("commands.reply.history_set", "en", count=2)
        await ask(fake, "question 0")
        for n in (1, 2):
            await run.wait_for(lambda n=n: finished(fake, n))
            await eventually(lambda n=n: recorded(bot, texts(fake)[n - 1].id))
            await ask(fake, f"question {n}", reply_to=texts(fake)[n - 1].id)
        await run.wait_for(lambda: finished(fake, 3) and bool(notices(fake)))
    # Two earlier messages fit (question 1 and its answer); question 0 and its answer did not.
    assert [m["content"] for m in openai_turns(server.requests[2])] == ["question 1", "Answer 1.", "question 2"]
    assert len(openai_turns(server.requests[1])) == 3  # the second question still had all of it
    assert notices(fake) == [NOTICE + discord_text(fake, "chat.history_cut", "en", count="2")]


async def test_a_dm_follow_up_without_a_reply_continues_the_recent_messages(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Hello in private.", piece=5))
    server.reply(openai_stream("Still here.", piece=5))
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="dm-model",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-operator-1")
    dm = fake.dm_channel_id
    async with running_bot(fake, bot) as run:
        await fake.send_user_message("hi, remember the number 7", dm=True)
        await run.wait_for(lambda: finished(fake, 1, dm))
        await fake.send_user_message("which number?", dm=True)
        await run.wait_for(lambda: finished(fake, 2, dm))
    assert openai_turns(server.requests[1]) == [
        {"role": "user", "content": "hi, remember the number 7"},  # no names in a DM
        {"role": "assistant", "content": "Hello in private."},
        {"role": "user", "content": "which number?"}]


async def test_a_keyless_custom_endpoint_answers_without_an_authorization_header(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("No key, no problem.", piece=5))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=())
        await ask(fake, "hello local model")
        await run.wait_for(lambda: finished(fake, 1))
        status = await command(run, fake, "status")
    assert [m.content for m in texts(fake)] == ["No key, no problem."]
    [request] = server.requests
    assert request.json["model"] == "model-a"
    assert "authorization" not in {name.lower() for name in request.headers}
    assert t("commands.status.no_key_needed", "en", provider="custom", model="model-a") in status.content


async def test_the_operators_keyless_custom_default_sends_no_authorization_header(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("The operator's local model.", piece=5))
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="local",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1")
    async with running_bot(fake, bot) as run:
        await ask(fake, "hello")
        await run.wait_for(lambda: finished(fake, 1))
    [request] = server.requests
    assert "authorization" not in {name.lower() for name in request.headers}


async def test_a_server_with_custom_keys_never_falls_back_to_sending_none(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Every stored key resting says so; nothing is sent without a key instead."""
    fake, server = fake_discord, provider_server
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        later = datetime.now(UTC) + timedelta(hours=1)
        async with bot.sessions() as session, session.begin():
            for row in (await server_keys(bot)).values():
                await repo.record_key_failure(session, repo.KeyRef("server", row.id), "rate_limit",
                                              datetime.now(UTC), later)
        await ask(fake, "anyone?")
        await run.wait_for(lambda: bool(answer_messages(fake)))
    assert server.requests == []
    assert [m.content for m in answer_messages(fake)] == [discord_text(fake, "chat.keys_cooling", "en")]


async def test_an_empty_pool_says_no_key_is_configured(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-test")
    async with running_bot(fake, bot) as run:
        await ask(fake, "anyone?")
        await run.wait_for(lambda: bool(answer_messages(fake)))
    assert server.requests == []
    [said] = answer_messages(fake)
    assert said.content == discord_text(fake, "chat.no_key_configured", "en")
    assert said.content != discord_text(fake, "chat.keys_cooling", "en")
