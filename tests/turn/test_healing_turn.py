"""A refused parameter heals inside the turn: the answer comes, the key stays healthy, and a
manager reads in `/status` what the model ignores; `/model params` says which of the
route's models take no temperature at all."""

from __future__ import annotations

from bot import repo
from bot.repo.params import set_params
from tests.support.check_answers import answer_embeds, plain_answer_messages
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server, cooling_for, server_keys
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.turn.test_turn_discord import ask

TEMPERATURE_REFUSED = {"error": {"message": "Unsupported parameter: 'temperature' is not supported with this model.",
                                 "type": "invalid_request_error", "param": "temperature", "code": None}}


async def test_a_refused_temperature_heals_on_the_same_key_and_shows_in_status(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(Reply.error(400, TEMPERATURE_REFUSED))
    server.reply(openai_stream("Healed and answered.", piece=7))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        async with bot.sessions() as session, session.begin():
            await set_params(session, int(fake.guild_id), temperature=0.7)
        await ask(fake, "warm?")
        await run.wait_for(lambda: "Healed and answered." in "".join(
            m.content for m in plain_answer_messages(fake)))
        first, healed = server.requests
        assert first.json["temperature"] == 0.7 and "temperature" not in healed.json
        assert first.api_key == healed.api_key == "sk-pool-first"  # the same key, not rotated
        assert answer_embeds(fake) == []
        keys = await server_keys(bot)
        assert all(cooling_for(row) == 0 for row in keys.values())  # its health untouched
        status = await command(run, fake, "status")
        assert "model-a: temperature dropped: the provider refused it." in status.content.splitlines()
        await ask(fake, "again?")
        await run.wait_for(lambda: len(server.requests) == 3)
        assert "temperature" not in server.requests[2].json  # remembered: left out up front


async def test_model_params_says_which_route_models_take_no_temperature(
        fake_discord: FakeDiscord, turn_bot) -> None:
    fake = fake_discord
    bot = turn_bot()
    guild = int(fake.guild_id)
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_text_model(session, guild, "anthropic", "claude-opus-4-7")
            await repo.add_fallback(session, guild, "google", "gemini-3-flash-preview")
        reply = await command(run, fake, "model", sub("params", opt("temperature", 0.5)))
        lines = reply.content.splitlines()
        assert "claude-opus-4-7 takes no temperature: it is not sent to it." in lines
        assert not any("gemini-3-flash-preview" in line for line in lines)  # Gemini takes one
        japanese = await command(run, fake, "model", sub("params"), locale="ja")
        assert "claude-opus-4-7 は temperature を受け付けないため、送信されません。" in japanese.content
        status = await command(run, fake, "status")
        assert "claude-opus-4-7 takes no temperature: it is not sent to it." in status.content.splitlines()
