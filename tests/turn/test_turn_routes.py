"""More of the turn's walk: transient failures, resting pools, blocked routes, counters."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from prometheus_client import REGISTRY

from bot import repo
from bot.repo import KeyRef
from providers.i18n import t
from tests.support.check_answers import (
    answer_embeds,
    delivered,
    notice_messages,
    plain_answer_messages,
)
from tests.support.data_errors import openai_error
from tests.support.data_openai import openai_stream
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_commands import discord_text
from tests.support.drive_discord_client import running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import configure_server, cooling_for, server_keys
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer
from tests.turn.test_turn_discord import RATE_LIMIT, ask, delivered_with_notice


def counter(name: str, provider: str) -> float:
    return REGISTRY.get_sample_value(name, {"provider": provider}) or 0.0


async def test_transient_failures_try_every_key_then_the_next_model(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "The fallback model is up."
    overloaded = openai_error(503, "The engine is currently overloaded", kind="server_error")
    server.enqueue(overloaded, overloaded)
    server.reply(openai_stream(text, piece=8))
    rotations = counter("key_rotations_total", "custom")
    fallbacks = counter("model_fallbacks_used_total", "custom")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, fallbacks=("model-b",))
        await ask(fake, "busy?")
        await run.wait_for(lambda: delivered_with_notice(fake, text))
    assert [(r.json["model"], r.api_key) for r in server.requests] == [
        ("model-a", "sk-pool-first"), ("model-a", "sk-pool-second"), ("model-b", "sk-pool-first")]
    assert counter("key_rotations_total", "custom") == rotations + 1
    assert counter("model_fallbacks_used_total", "custom") == fallbacks + 1
    keys = await server_keys(bot)
    assert all(cooling_for(row) == 0 for row in keys.values())  # overload is nobody's key's fault
    assert answer_embeds(fake) == []


async def test_resting_pool_is_skipped_and_a_fully_resting_pool_is_explained(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("should not be asked"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        now = datetime.now(UTC)
        async with bot.sessions() as session, session.begin():
            for row in (await server_keys(bot)).values():
                # Another shard rested both keys: this process must see it.
                await repo.record_key_failure(session, KeyRef("server", row.id), "rate_limit", now,
                                              now + timedelta(minutes=5))
        await ask(fake, "hello?")
        await run.wait_for(lambda: bool(fake.bot_messages(fake.channel_id)))
        await asyncio.sleep(0.2)
    assert server.requests == []
    [message] = fake.bot_messages(fake.channel_id)
    assert message.content == discord_text(fake, "chat.keys_cooling", "en")


async def test_member_keys_required_without_a_personal_key_says_how_to_add_one(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        async with bot.sessions() as session, session.begin():
            await repo.set_member_keys_required(session, int(fake.guild_id), True)
        await ask(fake, "hello?")
        await run.wait_for(lambda: bool(fake.bot_messages(fake.channel_id)))
    assert server.requests == []
    [message] = fake.bot_messages(fake.channel_id)
    assert message.content == discord_text(fake, "chat.member_key_required", "en")
    assert "</personal key set:" in message.content


async def test_single_key_rate_limit_is_a_plain_rate_limit(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_error(429, **RATE_LIMIT))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=("sk-pool-alone",))
        await ask(fake, "one key")
        await run.wait_for(lambda: bool(answer_embeds(fake)))
    [embed] = answer_embeds(fake)
    assert embed["title"] == t("genai.stream.rate_limit_title", "en")
    assert len(server.requests) == 1 and plain_answer_messages(fake) == [] and notice_messages(fake) == []


async def test_environment_default_without_stored_configuration_uses_the_first_key(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "From the operator's default."
    server.reply(responses_stream(text, piece=5))  # OpenAI speaks the Responses API
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="env-model",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-env-one,sk-env-two")
    async with running_bot(fake, bot) as run:
        await ask(fake, "defaults?")
        await run.wait_for(lambda: delivered(fake, text))

        async def recorded() -> None:
            async with bot.sessions() as session:
                health = await repo.environment_key_health(session, ["sk-env-one", "sk-env-two"])
            assert [h.successes for h in health] == [1, 0]

        await eventually(recorded)
    [request] = server.requests
    assert (request.api_key, request.json["model"]) == ("sk-env-one", "env-model")


async def test_keys_stored_under_a_dropped_encryption_key_are_skipped_not_fatal(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, caplog) -> None:
    from cryptography.fernet import Fernet

    from bot.vault import Vault

    fake, server = fake_discord, provider_server
    server.reply(openai_stream("should not be asked"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        guild = int(fake.guild_id)
        async with bot.sessions() as session, session.begin():
            await repo.set_custom_endpoint(session, guild, f"{server.url}/v1", "model-a")
            await repo.add_server_key(session, Vault([Fernet.generate_key()]), guild, "custom",
                                      "sk-lost-under-old-key")
        await ask(fake, "hello?")
        await run.wait_for(lambda: bool(fake.bot_messages(fake.channel_id)))
        await ask(fake, "still alive?")
        await run.wait_for(lambda: len(fake.bot_messages(fake.channel_id)) == 2)
    assert server.requests == []
    assert "cannot be decrypted" in caplog.text and "sk-lost" not in caplog.text
