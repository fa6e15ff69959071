"""`/model set|endpoint` and `/model fallback ...` through the fake Discord."""

from __future__ import annotations

import pytest

from bot import repo
from tests.support.drive_commands import NO_PERMISSIONS, command, group, mention, opt, sub
from tests.support.drive_discord_client import running_bot

REFUSED = "You need the Manage Server permission for this command."


async def stored(bot, fake):
    async with bot.sessions() as session:
        return (await repo.get_server_settings(session, int(fake.guild_id)),
                await repo.list_fallbacks(session, int(fake.guild_id)))


async def test_model_set_and_fallback_chain(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        done = await command(run, fake, "model", sub("set", opt("provider", "anthropic"), opt("model", "claude-x")))
        assert (done.content, done.ephemeral) == ("Text model set to anthropic / `claude-x`.", True)
        empty = await command(run, fake, "model", group("fallback", sub("list")))
        assert empty.content == "No fallback models are configured."
        for provider, model in (("google", "gemini-a"), ("openrouter", "vendor/model-b"), ("deepseek", "ds-c")):
            await command(run, fake, "model", group("fallback", sub("add", opt("provider", provider),
                                                                     opt("model", model))))
        dup = await command(run, fake, "model", group("fallback", sub("add", opt("provider", "google"),
                                                                       opt("model", "gemini-a"))))
        assert dup.content == "That model is already in the fallback chain."
        removed = await command(run, fake, "model", group("fallback", sub("remove", opt("position", 1))))
        assert removed.content == "Removed fallback #1 (google / `gemini-a`)."
        absent = await command(run, fake, "model", group("fallback", sub("remove", opt("position", 7))))
        assert absent.content == "There is no fallback #7."
        listed = await command(run, fake, "model", group("fallback", sub("list")), locale="ja")
        assert listed.content.splitlines() == [
            "**フォールバック順**", "1. openrouter / `vendor/model-b`", "2. deepseek / `ds-c`"]
        settings, chain = await stored(bot, fake)
    assert (settings.provider, settings.model) == ("anthropic", "claude-x")
    assert [(t.provider, t.model) for t in chain] == [("openrouter", "vendor/model-b"), ("deepseek", "ds-c")]


async def test_unknown_provider_and_bad_model_store_nothing(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        unknown = await command(run, fake, "model", sub("set", opt("provider", "skynet"), opt("model", "m")))
        assert unknown.content == "Unknown provider `skynet`. Nothing was changed."
        spaced = await command(run, fake, "model", sub("set", opt("provider", "openai"), opt("model", "gpt 4")),
                               locale="ja")
        assert spaced.content == "モデル名が空か不正です。何も変更していません。"
        custom = await command(run, fake, "model", sub("set", opt("provider", "custom"), opt("model", "m")))
        assert custom.content == (f"The custom provider needs an address first: use {mention(fake, 'model endpoint')}. "
                                  "Nothing was changed.")
        fb = await command(run, fake, "model", group("fallback", sub("add", opt("provider", "skynet"),
                                                                      opt("model", "m"))))
        assert fb.content == "Unknown provider `skynet`. Nothing was changed."
        settings, chain = await stored(bot, fake)
    assert settings.provider is None and chain == []


async def test_model_commands_refused_without_manage_server(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        for options in (sub("set", opt("provider", "openai"), opt("model", "m")),
                        sub("endpoint", opt("base_url", "https://93.184.215.14/v1"), opt("model", "m")),
                        group("fallback", sub("add", opt("provider", "openai"), opt("model", "m"))),
                        group("fallback", sub("remove", opt("position", 1))),
                        group("fallback", sub("list"))):
            answer = await command(run, fake, "model", options, permissions=NO_PERMISSIONS)
            assert (answer.content, answer.ephemeral) == (REFUSED, True)
        settings, chain = await stored(bot, fake)
    assert settings.provider is None and chain == []


@pytest.mark.parametrize(("url", "expected"), [
    ("http://127.0.0.1:8000/v1",
     "`http://127.0.0.1:8000/v1` points at a private or local address; the bot's operator must allow "
     "such endpoints (ALLOW_PRIVATE_ENDPOINTS). Nothing was changed."),
    ("http://169.254.169.254/latest", "`http://169.254.169.254/latest` cannot be used as an endpoint. Nothing was changed."),
    ("ftp://93.184.215.14/v1", "`ftp://93.184.215.14/v1` is not a usable endpoint URL (http:// or https:// and a host name). "
     "Nothing was changed."),
    ("https://93.184.215.14/v1?key=sk-in-query", "`https://93.184.215.14/v1` is not a usable endpoint URL (http:// or "
     "https:// and a host name). Nothing was changed."),
    ("https://me:sk-pass@93.184.215.14/v1", "Do not put a user name or password in the endpoint URL "
     "(`https://93.184.215.14/v1`). Nothing was changed."),
])
async def test_endpoint_refusals(fake_discord, bot_factory, url, expected):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        answer = await command(run, fake, "model", sub("endpoint", opt("base_url", url), opt("model", "local")))
        settings, _ = await stored(bot, fake)
    assert (answer.type, answer.content, answer.ephemeral) == (5, expected, True)
    assert settings.provider is None and settings.base_url is None


async def test_endpoint_accepted_public_and_private_when_the_operator_allows(fake_discord, bot_factory):
    fake = fake_discord
    async with running_bot(fake, bot_factory()) as run:
        no_model = await command(run, fake, "model", sub("endpoint", opt("base_url", "https://93.184.215.14/v1/")))
        assert no_model.content == "Give a model name too: none is set yet. Nothing was changed."
        done = await command(run, fake, "model", sub("endpoint", opt("base_url", "https://93.184.215.14/v1/"),
                                                      opt("model", "llama")))
        assert done.content == "Custom endpoint set: https://93.184.215.14/v1 with `llama`."
    fake2_bot = bot_factory(ALLOW_PRIVATE_ENDPOINTS="true")
    async with running_bot(fake, fake2_bot) as run:
        local = await command(run, fake, "model", sub("endpoint", opt("base_url", "http://127.0.0.1:11434/v1")))
        assert local.content == "Custom endpoint set: http://127.0.0.1:11434/v1 with `llama`."
        settings, _ = await stored(fake2_bot, fake)
    assert (settings.provider, settings.model, settings.base_url) == ("custom", "llama", "http://127.0.0.1:11434/v1")
