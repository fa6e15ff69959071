"""A base URL without `/v1` (Ollama's most common set-up mistake): the model server
answers 404 "404 page not found" in plain text. The member is told the address answered
"not found" and how to fix the base URL, never to check a key (there may be none); the
operator's log and a manager's `/model check` name the host and path that answered.

The real LLMBot and discord.py against the fake Discord, the official OpenAI SDK against
the replay server standing in for Ollama."""

from __future__ import annotations

import json
import logging

import pytest

from bot import repo
from providers.i18n import t
from tests.support.check_answers import answer_embeds
from tests.support.drive_commands import command, discord_text, sub
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply

# What Ollama (Go's net/http) answers for a path it does not serve.
NOT_FOUND = Reply(status=404, body=b"404 page not found", content_type="text/plain; charset=utf-8")
KEY_ADVICE = ("/keys add", t("genai.tips.verify_api_key", "en"))


@pytest.fixture
def make_bot(tmp_path):
    make = llmbot_factory(tmp_path, "base-url.sqlite3")
    return lambda **env: make(ALLOW_PRIVATE_ENDPOINTS="true", **env)  # the replay server is on loopback


async def test_the_operators_default_without_v1_is_a_wrong_address_never_a_key(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot, caplog) -> None:
    fake, server = fake_discord, provider_server
    server.reply(NOT_FOUND)
    bot = make_bot(DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="llama3.2",
                   DEFAULT_TEXT_BASE_URL=server.url)  # Ollama's address, its /v1 forgotten
    caplog.set_level(logging.WARNING)
    async with running_bot(fake, bot) as run:
        await fake.send_user_message(f"<@{fake.bot_user['id']}> hello?", mention_bot=True)
        await run.wait_for(lambda: answer_embeds(fake))
    [embed] = answer_embeds(fake)
    shown = json.dumps(embed, ensure_ascii=False)
    assert embed["title"] == t("genai.stream.not_found_title", "en")
    assert "answered “not found”" in embed["description"] and "base URL" in embed["description"]
    assert discord_text(fake, "genai.tips.check_base_url", "en") in shown
    assert not any(advice in shown for advice in KEY_ADVICE)
    assert "/chat/completions" not in shown  # the address is for those who set it, not the channel
    assert [r.path for r in server.requests] == ["/chat/completions"]
    assert f"(not_found at 127.0.0.1:{server.port}/chat/completions)" in caplog.text


async def test_model_check_names_the_address_that_answered_not_found(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(NOT_FOUND)
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_custom_endpoint(session, int(fake.guild_id), f"{server.url}/api", "llama3.2")
            await repo.add_server_key(session, bot.vault, int(fake.guild_id), "custom", "sk-ollama-none")
        done = await command(run, fake, "model", sub("check"))
    [text_row] = [line for line in done.content.splitlines() if "Streamed text" in line]
    assert text_row.startswith("✗ ") and "not_found:" in text_row
    assert f"127.0.0.1:{server.port}/api/chat/completions" in text_row
    assert discord_text(fake, "genai.tips.check_base_url", "en") in done.content
    assert discord_text(fake, "genai.tips.verify_api_key", "en") not in done.content
