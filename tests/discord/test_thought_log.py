"""Thought-log posting through the real discord.py client against the fake Discord."""

from __future__ import annotations

from pathlib import Path

import discord

from bot import migrate
from bot.db.engine import create_engine
from bot.load.config_cache import ConfigCache, read_config
from bot.question.thought_log import Reasoning, configured_channel_id, post_thought_log
from bot.repo import set_thought_log_channel
from bot.settings import Settings
from providers.types import ThoughtLogEntry
from stream.capture import CapturedBlock
from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord

VIEW_CHANNEL = 1 << 10


def _client() -> discord.Client:
    return discord.Client(intents=discord.Intents.default(), **fast_ready_kwargs())


def _source(client: discord.Client, fake: FakeDiscord):
    """The channel the question was asked in."""
    return client.get_channel(int(fake.channel_id))


async def test_short_reasoning_is_one_embed_with_provider_footer(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    thoughts = [ThoughtLogEntry("raw", "First I consider the question.", "deepseek"),
                ThoughtLogEntry("signature", "c2lnbmF0dXJl", "deepseek")]
    blocks = [CapturedBlock("think", "an inline think block")]
    async with running_bot(fake, _client()) as run:
        sent = await post_thought_log(run.bot, _source(run.bot, fake), int(fake.thought_channel_id),
                                      Reasoning(thoughts, blocks, "deepseek"))
    stored = fake.messages[str(sent.id)]
    assert stored.channel_id == fake.thought_channel_id and stored.attachments == []
    [embed] = stored.embeds
    assert embed["footer"]["text"] == "Provider: deepseek"
    assert embed["title"] == "Thought log"
    assert "First I consider the question." in embed["description"]
    assert "an inline think block" in embed["description"]
    assert "c2lnbmF0dXJl" not in embed["description"]  # signatures are noted, never shown
    assert stored.allowed_mentions == {"parse": [], "replied_user": False}


async def test_openrouter_backend_and_long_reasoning_as_attachment(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    long_text = "step " * 3000  # 15,000 characters: more than an embed holds
    async with running_bot(fake, _client()) as run:
        sent = await post_thought_log(run.bot, _source(run.bot, fake), int(fake.thought_channel_id),
                                      Reasoning([ThoughtLogEntry("summary", long_text, "openrouter")],
                                                provider="openrouter", serving_provider="DeepInfra"), "ja")
    stored = fake.messages[str(sent.id)]
    [embed] = stored.embeds
    assert embed["footer"]["text"] == "プロバイダー: openrouter（経由: DeepInfra）"  # the server's language
    assert len(embed["description"]) <= 4096
    [attachment] = stored.attachments
    assert attachment["filename"].endswith(".txt")
    assert stored.files[attachment["filename"]].decode() == long_text.strip()


async def test_nothing_posted_without_channel_reasoning_or_guild(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    entry = [ThoughtLogEntry("raw", "thinking", "openai")]
    async with running_bot(fake, _client()) as run:
        source = _source(run.bot, fake)
        log_id = int(fake.thought_channel_id)
        assert await post_thought_log(run.bot, source, None, Reasoning(entry, provider="openai")) is None
        assert await post_thought_log(run.bot, source, log_id, Reasoning([], provider="openai")) is None
        assert await post_thought_log(run.bot, None, log_id, Reasoning(entry, provider="openai")) is None  # a DM
        # A channel id that is not a channel of this guild (unknown here): refused, not posted.
        assert await post_thought_log(run.bot, source, 4242, Reasoning(entry, provider="openai")) is None
    assert fake.bot_messages() == []


async def test_forbidden_thought_channel_is_swallowed(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    fake.forbid_channel(fake.thought_channel_id)
    async with running_bot(fake, _client()) as run:
        sent = await post_thought_log(run.bot, _source(run.bot, fake), int(fake.thought_channel_id),
                                      Reasoning([ThoughtLogEntry("raw", "x", "openai")], provider="openai"))
    assert sent is None


async def test_a_private_channels_reasoning_is_not_posted_where_others_can_read_it(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    # #general is hidden from @everyone; the thought-log channel is not.
    fake.channel_overwrites[fake.channel_id] = [
        {"id": fake.guild_id, "type": 0, "allow": "0", "deny": str(VIEW_CHANNEL)}]
    entry = [ThoughtLogEntry("raw", "quoting a private channel", "openai")]
    async with running_bot(fake, _client()) as run:
        private = await post_thought_log(run.bot, _source(run.bot, fake), int(fake.thought_channel_id),
                                         Reasoning(entry, provider="openai"))
        thought_channel = run.bot.get_channel(int(fake.thought_channel_id))
        same_place = await post_thought_log(run.bot, thought_channel, int(fake.thought_channel_id),
                                            Reasoning(entry, provider="openai"))
    assert private is None and same_place is not None
    assert [m.channel_id for m in fake.bot_messages()] == [fake.thought_channel_id]


async def test_a_cut_reasoning_says_so(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    async with running_bot(fake, _client()) as run:
        sent = await post_thought_log(run.bot, _source(run.bot, fake), int(fake.thought_channel_id),
                                      Reasoning([ThoughtLogEntry("raw", "the tail", "openai")], provider="openai",
                                                cut=True))
    [embed] = fake.messages[str(sent.id)].embeds
    assert embed["description"].startswith("[the beginning of the reasoning was cut")


async def test_channel_id_comes_from_the_server_configuration(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}")
    try:
        await migrate.upgrade(engine)
        config = ConfigCache(engine, Settings(_env_file=None))
        assert configured_channel_id(await read_config(config, 77, 5)) is None
        async with config.sessions() as session, session.begin():
            await set_thought_log_channel(session, 77, 1234)  # a settings write drops the cached copy
        assert configured_channel_id(await read_config(config, 77, 5)) == 1234
        assert configured_channel_id(await read_config(config, None, 5)) is None
    finally:
        await engine.dispose()
