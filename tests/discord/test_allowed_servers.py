"""ALLOWED_SERVERS: the bot leaves every server the operator did not allow (found at start
or joined later, one log line each), answers nothing and runs no command there while it
cannot leave; and at start a public application without an allowlist is one warning line.

The real LLMBot and discord.py against the fake Discord (which records the bot leaving and
sends GUILD_DELETE as Discord does), the replay provider as the operator's default."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

LEAVING = "it is not in ALLOWED_SERVERS"


@pytest.fixture
def make_bot(tmp_path, provider_server: ProviderReplayServer):
    provider_server.reply(openai_stream("an answer", piece=20))
    make = llmbot_factory(tmp_path)
    return lambda **env: make(ALLOW_PRIVATE_ENDPOINTS="true", DEFAULT_TEXT_PROVIDER="custom",
                              DEFAULT_TEXT_MODEL="m", DEFAULT_TEXT_BASE_URL=f"{provider_server.url}/v1", **env)


async def test_the_bot_leaves_servers_it_was_not_allowed_in_at_start_and_when_added(
        fake_discord: FakeDiscord, make_bot, caplog) -> None:
    fake = fake_discord
    stranger = fake.add_guild(0)  # a server that added the public bot earlier
    caplog.set_level(logging.WARNING)
    async with running_bot(fake, make_bot(ALLOWED_SERVERS=fake.guild_id)) as run:
        await run.wait_for(lambda: fake.left_guilds == [stranger.id])
        later = await fake.join_guild(0)
        await run.wait_for(lambda: fake.left_guilds == [stranger.id, later.id])
        await run.wait_for(lambda: run.bot.get_guild(int(later.id)) is None)
        assert [g.id for g in run.bot.guilds] == [int(fake.guild_id)]
    leaving = [r.getMessage() for r in caplog.records if LEAVING in r.getMessage()]
    assert leaving == [f"leaving server {stranger.name} ({stranger.id}): {LEAVING}",
                       f"leaving server {later.name} ({later.id}): {LEAVING}"]
    assert "Public Bot" not in caplog.text  # an allowlist is set: no risk to warn of


async def test_a_server_it_cannot_leave_gets_no_answer_and_no_command(
        fake_discord: FakeDiscord, make_bot, provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    stranger = fake.add_guild(0)
    fake.refuse_leaving = True
    async with running_bot(fake, make_bot(ALLOWED_SERVERS=f"{fake.guild_id}")) as run:
        await fake.send_user_message(f"<@{fake.bot_user['id']}> spend your keys", mention_bot=True,
                                     channel_id=stranger.channels[0])
        await fake.send_interaction(name="status", channel_id=stranger.channels[0])
        await fake.send_user_message(f"<@{fake.bot_user['id']}> hello", mention_bot=True)  # after both
        await run.wait_for(lambda: any(m.content == "an answer" for m in fake.bot_messages(fake.channel_id)))
        await asyncio.sleep(0.3)
    assert fake.bot_messages(stranger.channels[0]) == []
    assert fake.interaction_responses == []
    assert ["spend your keys" not in r.json["messages"][-1]["content"] for r in provider_server.requests] == [True]


@pytest.mark.parametrize(("public", "allowed", "warned"), [(True, "", True), (False, "", False), (True, "1", False)])
async def test_a_public_bot_without_an_allowlist_is_one_warning_at_start(
        fake_discord: FakeDiscord, make_bot, caplog, public, allowed, warned) -> None:
    fake = fake_discord
    fake.bot_public = public
    caplog.set_level(logging.WARNING)
    allowlist = f"{fake.guild_id},{allowed}" if allowed else ""
    async with running_bot(fake, make_bot(ALLOWED_SERVERS=allowlist)):
        pass
    lines = [r.getMessage() for r in caplog.records if "ALLOWED_SERVERS is not set" in r.getMessage()]
    assert len(lines) == (1 if warned else 0)
    if warned:
        assert "Public Bot" in lines[0] and "ALLOWED_SERVERS" in lines[0] and "\n" not in lines[0]
