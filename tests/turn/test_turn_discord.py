"""The generation turn inside the real bot (LLMBot: database, cogs) against the fake
Discord and the replay provider, which answers per API key."""

from __future__ import annotations

import asyncio

from bot import repo
from providers.i18n import t
from tests.support.check_answers import (
    INDICATOR,
    answer_embeds,
    delivered,
    embed_text,
    notice_messages,
    plain_answer_messages,
)
from tests.support.data_errors import anthropic_error, openai_error
from tests.support.data_openai import openai_midstream_error, openai_stream
from tests.support.drive_commands import command, discord_text
from tests.support.drive_discord_client import running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import (
    configure_personal,
    configure_server,
    cooling_for,
    personal_row,
    server_keys,
)
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

RATE_LIMIT = {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded",
              "kind": "requests"}


async def ask(fake: FakeDiscord, text: str):
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True)


async def test_rate_limited_first_key_rotates_to_the_second_and_rests(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "The second key answered this one."
    server.reply(openai_error(429, **RATE_LIMIT, headers={"retry-after": "30"}), key="sk-pool-first")
    server.reply(openai_stream(text, piece=6), key="sk-pool-second")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "hello")
        await run.wait_for(lambda: delivered(fake, text))

        async def health() -> None:
            keys = await server_keys(bot)
            assert keys["irst"].errors == 1 and keys["irst"].last_error_type == "rate_limit"
            assert 20 < cooling_for(keys["irst"]) <= 30  # Retry-After, not the default minute
            assert keys["cond"].successes == 1 and cooling_for(keys["cond"]) == 0

        await eventually(health)
        # The resting key is skipped by the next turn (the cool-down lives in the database).
        await ask(fake, "again")
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 2 and INDICATOR not in plain_answer_messages(fake)[-1].content)
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-pool-second", "sk-pool-second"]
    assert [m.content for m in plain_answer_messages(fake)] == [text, text]
    assert answer_embeds(fake) == [] and notice_messages(fake) == []
    assert not any(m.deleted for m in fake.bot_messages(fake.channel_id))  # nothing was posted twice


async def test_model_error_falls_back_to_the_next_model_with_a_notice(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "Answered by the fallback model."
    server.enqueue(openai_error(404, "The model `model-a` does not exist", code="model_not_found",
                                kind="invalid_request_error"))
    server.reply(openai_stream(text, piece=8))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, fallbacks=("model-b",))
        await ask(fake, "which model?")
        await run.wait_for(lambda: delivered_with_notice(fake, text))
    assert [r.json["model"] for r in server.requests] == ["model-a", "model-b"]
    # A model's failure is not the key's: the same key serves the fallback, nothing rests.
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-pool-first"]
    keys = await server_keys(bot)
    assert keys["irst"].errors == 0 and cooling_for(keys["irst"]) == 0
    [notice] = notice_messages(fake)
    assert notice.content == t("chat.fallback_used", "en", model="custom/model-b")
    assert answer_embeds(fake) == []


def delivered_with_notice(fake: FakeDiscord, text: str) -> bool:
    return bool(notice_messages(fake)) and [m.content for m in plain_answer_messages(fake)] == [text]


async def test_every_key_rate_limited_shows_the_pool_exhausted_embed(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_error(429, **RATE_LIMIT))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "anyone there?")
        await run.wait_for(lambda: bool(answer_embeds(fake)))
        await asyncio.sleep(0.2)
    [embed] = answer_embeds(fake)
    assert embed["title"] == t("genai.stream.rate_limit_title_all_rotation_keys", "en")
    assert "sk-pool" not in str(fake.bot_messages())
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-pool-second"]
    keys = await server_keys(bot)
    for row in keys.values():
        assert row.errors == 1 and row.last_error_type == "rate_limit"
        assert 50 < cooling_for(row) <= 60  # no Retry-After: the default minute
    assert plain_answer_messages(fake) == []


async def test_personal_key_failure_falls_back_to_the_server_route(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # the personal anthropic route, locally
    text = "The server's model answered."
    server.reply(anthropic_error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit"),
                 key="sk-ant-personal-9f2e")
    server.reply(openai_stream(text, piece=8), key="sk-pool-only")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=("sk-pool-only",))
        await configure_personal(bot, fake, "sk-ant-personal-9f2e", server_fallback=True)
        await ask(fake, "mine or yours?")
        await run.wait_for(lambda: delivered_with_notice(fake, text))
    first, second = server.requests
    assert (first.path, first.api_key, first.json["model"]) == ("/v1/messages", "sk-ant-personal-9f2e",
                                                                 "claude-personal")
    assert (second.path, second.api_key) == ("/v1/chat/completions", "sk-pool-only")
    [notice] = notice_messages(fake)
    assert notice.content == t("chat.server_fallback_used", "en", model="custom/model-a")
    row = await personal_row(bot)
    assert row.errors == 1 and row.last_error_type == "rate_limit" and cooling_for(row) > 0
    assert answer_embeds(fake) == []


async def test_member_keys_required_means_no_server_fallback(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(anthropic_error(401, "authentication_error", "invalid x-api-key"), key="sk-ant-personal-9f2e")
    server.reply(openai_stream("must not be used"), key="sk-pool-only")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=("sk-pool-only",))
        await configure_personal(bot, fake, "sk-ant-personal-9f2e", server_fallback=True)
        async with bot.sessions() as session, session.begin():
            await repo.set_member_keys_required(session, int(fake.guild_id), True)
        await ask(fake, "only my key")
        await run.wait_for(lambda: bool(answer_embeds(fake)))
        await asyncio.sleep(0.2)
    assert [r.api_key for r in server.requests] == ["sk-ant-personal-9f2e"]
    [embed] = answer_embeds(fake)
    shown = embed_text(embed)
    assert discord_text(fake, "genai.tips.verify_api_key_personal", "en") in shown  # advice for the member's own key
    assert discord_text(fake, "genai.tips.disable_personal_text_override", "en") in shown
    assert "/keys" not in shown and "9f2e" not in shown and "sk-ant" not in shown
    row = await personal_row(bot)
    assert row.errors == 1 and row.last_error_type == "invalid_key"
    assert plain_answer_messages(fake) == [] and notice_messages(fake) == []


async def test_content_blocked_stops_at_once(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_error(400, "The response was filtered due to the prompt triggering the content "
                              "management policy.", code="content_filter", kind="invalid_request_error"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, fallbacks=("model-b",))
        await ask(fake, "something blocked")
        await run.wait_for(lambda: bool(answer_embeds(fake)))
        await asyncio.sleep(0.3)
    assert len(server.requests) == 1  # no other key, no other model
    [embed] = answer_embeds(fake)
    assert embed["title"] == t("genai.stream.content_blocked_title", "en")
    keys = await server_keys(bot)
    assert all(row.errors == 0 and cooling_for(row) == 0 for row in keys.values())


async def test_partial_answer_of_a_failed_attempt_is_replaced_by_the_retry(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    partial = "PARTIAL beginning that the first key streamed before the provider failed."
    text = "The complete answer from the retry."
    server.reply(openai_midstream_error(partial, piece=12, event_delay=0.02), key="sk-pool-first")
    server.reply(openai_stream(text, piece=8, first_byte_delay=0.2), key="sk-pool-second")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "try hard")
        await run.wait_for(lambda: delivered(fake, text))
    posted = [m for m in fake.bot_messages(fake.channel_id) if any("PARTIAL" in h for h in m.history)]
    assert posted and all(m.deleted for m in posted)  # it was on screen, then deleted
    assert [m.content for m in plain_answer_messages(fake)] == [text]
    retry_answer = plain_answer_messages(fake)[0]
    assert all(m.created_at < retry_answer.created_at for m in posted)  # gone before the retry posted
    # While the retry thinks, the reader sees "typing…" again.
    assert any(posted[-1].created_at < when < retry_answer.created_at for _, when in fake.typing)
    assert answer_embeds(fake) == [] and notice_messages(fake) == []
    keys = await server_keys(bot)
    assert keys["irst"].errors == 1 and keys["irst"].last_error_type == "overloaded"
    assert cooling_for(keys["irst"]) == 0  # a transient failure does not rest the key


async def test_stop_command_ends_a_slow_stream_and_keeps_the_text(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = " ".join(f"word{i}" for i in range(400))
    server.reply(openai_stream(text, piece=10, event_delay=0.02))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        question = await ask(fake, "count slowly")
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 1 and "word20" in plain_answer_messages(fake)[0].content)
        bystander = await command(run, fake, "stop", permissions="0", user=fake.owner)  # not theirs to stop
        stopped = await command(run, fake, "stop", permissions="0")
        note = f"\n\n*{t('chat.answer_stopped', 'en')}*"
        await run.wait_for(lambda: plain_answer_messages(fake)[0].content.endswith(note))
        again = await command(run, fake, "stop", permissions="0")
        shown = plain_answer_messages(fake)[0].content
        await asyncio.sleep(0.3)
    link = f"https://discord.com/channels/{fake.guild_id}/{fake.channel_id}/{question.id}"
    assert (bystander.content, bystander.ephemeral) == (t("commands.stop.nothing", "en"), True)
    assert (stopped.content, stopped.ephemeral) == (t("commands.stop.stopped", "en", question=link), True)
    synced = next(c for c in fake.commands["global"] if c["name"] == "stop")
    assert synced["name_localizations"]["ja"] == "停止"
    assert synced["description_localizations"]["ja"] == t("commands.stop.description", "ja")
    assert (again.content, again.ephemeral) == (t("commands.stop.nothing", "en"), True)
    [answer] = plain_answer_messages(fake)
    assert answer.content == shown and "word20" in shown
    said = shown.removesuffix(note)  # the text so far, marked stopped
    assert text.startswith(said) and len(said) < len(text)
    assert len(server.requests) == 1 and answer_embeds(fake) == []
    keys = await server_keys(bot)
    assert keys["irst"].successes == 1 and keys["irst"].errors == 0


MANAGE_MESSAGES = str(1 << 13)


async def test_a_member_who_manages_messages_stops_every_answer_in_the_channel(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = " ".join(f"word{i}" for i in range(400))
    server.reply(openai_stream(text, piece=10, event_delay=0.02))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "count slowly")
        await fake.send_user_message(f"<@{fake.bot_user['id']}> me too", mention_bot=True, author=fake.owner)
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 2 and all("word20" in a.content for a in plain_answer_messages(fake)))
        stopped = await command(run, fake, "stop", permissions=MANAGE_MESSAGES, user=fake.owner)
        await run.wait_for(lambda: all(INDICATOR not in a.content for a in plain_answer_messages(fake)))
    assert stopped.content == t("commands.stop.stopped_all", "en", count=2)
    assert all(len(a.content) < len(text) for a in plain_answer_messages(fake))
