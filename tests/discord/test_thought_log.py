"""Thought-log posting through the real discord.py client against the fake Discord."""

from __future__ import annotations

from pathlib import Path

import discord

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.repo import set_thought_log_channel
from bot.thought_log import configured_channel_id, post_thought_log
from providers.types import ThoughtLogEntry
from stream.capture import CapturedBlock
from tests.fakes.discord_harness import fast_ready_kwargs, running_bot
from tests.fakes.discord_server import FakeDiscord


def _client() -> discord.Client:
    return discord.Client(intents=discord.Intents.default(), **fast_ready_kwargs())


async def test_short_reasoning_is_one_embed_with_provider_footer(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    thoughts = [ThoughtLogEntry("raw", "First I consider the question.", "deepseek"),
                ThoughtLogEntry("signature", "c2lnbmF0dXJl", "deepseek")]
    blocks = [CapturedBlock("think", "an inline think block")]
    async with running_bot(fake, _client()) as run:
        sent = await post_thought_log(run.bot, int(fake.thought_channel_id), guild_id=int(fake.guild_id),
                                      thoughts=thoughts, blocks=blocks, provider="deepseek")
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
        sent = await post_thought_log(run.bot, int(fake.thought_channel_id), guild_id=int(fake.guild_id),
                                      thoughts=[ThoughtLogEntry("summary", long_text, "openrouter")],
                                      provider="openrouter", serving_provider="DeepInfra", locale="ja")
    stored = fake.messages[str(sent.id)]
    [embed] = stored.embeds
    assert embed["footer"]["text"] == "Provider: openrouter via DeepInfra"
    assert len(embed["description"]) <= 4096
    [attachment] = stored.attachments
    assert attachment["filename"].endswith(".txt")
    assert stored.files[attachment["filename"]].decode() == long_text.strip()


async def test_nothing_posted_without_channel_reasoning_or_guild(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    entry = [ThoughtLogEntry("raw", "thinking", "openai")]
    async with running_bot(fake, _client()) as run:
        assert await post_thought_log(run.bot, None, guild_id=int(fake.guild_id),
                                      thoughts=entry, provider="openai") is None
        assert await post_thought_log(run.bot, int(fake.thought_channel_id), guild_id=int(fake.guild_id),
                                      thoughts=[], provider="openai") is None
        assert await post_thought_log(run.bot, int(fake.thought_channel_id), guild_id=None,
                                      thoughts=entry, provider="openai") is None
        # A channel id that is not a channel of this guild (unknown here): refused, not posted.
        assert await post_thought_log(run.bot, 4242, guild_id=int(fake.guild_id),
                                      thoughts=entry, provider="openai") is None
        assert await post_thought_log(run.bot, int(fake.thought_channel_id), guild_id=999,
                                      thoughts=entry, provider="openai") is None
    assert fake.bot_messages() == []


async def test_forbidden_thought_channel_is_swallowed(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    fake.forbid_channel(fake.thought_channel_id)
    async with running_bot(fake, _client()) as run:
        sent = await post_thought_log(run.bot, int(fake.thought_channel_id), guild_id=int(fake.guild_id),
                                      thoughts=[ThoughtLogEntry("raw", "x", "openai")], provider="openai")
    assert sent is None


async def test_channel_id_comes_from_the_server_configuration(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}")
    try:
        await migrate.upgrade(engine)
        sessions = session_factory(engine)
        assert await configured_channel_id(sessions, 77) is None
        async with sessions() as session, session.begin():
            await set_thought_log_channel(session, 77, 1234)
        assert await configured_channel_id(sessions, 77) == 1234
        assert await configured_channel_id(sessions, None) is None
    finally:
        await engine.dispose()
