"""The history of a listen-channel question, read from the fake Discord's REST history:
members named, the bot's own answers as assistant turns (a split answer is one), `//`
asides, other bots and the bot's notices left out, oldest first, the depth honoured."""

from __future__ import annotations

import discord

from bot.question.history import History, listen_history
from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord, snowflake


def _client() -> discord.Client:
    return discord.Client(intents=discord.Intents.default(), **fast_ready_kwargs())


def other_bot() -> dict:
    return {"id": snowflake(), "username": "otherbot", "discriminator": "0", "global_name": "Other Bot",
            "avatar": None, "bot": True}


def turns(history: History) -> list[tuple[str, str, str | None]]:
    return [(m.role, m.content, m.name) for m in history.messages]


async def _question(client: discord.Client, fake: FakeDiscord, content: str, **kwargs) -> discord.Message:
    """A member's message as the bot's listener would hold it (fetched over REST)."""
    stored = await fake.send_user_message(content, **kwargs)
    channel = client.get_channel(int(fake.channel_id))
    return await channel.fetch_message(int(stored.id))


def history_reads(fake: FakeDiscord) -> list[dict[str, str]]:
    return [r.query for r in fake.requests if r.method == "GET" and r.path == f"/channels/{fake.channel_id}/messages"]


async def test_members_are_named_and_asides_other_bots_and_notices_left_out(fake_discord: FakeDiscord) -> None:
    fake, client = fake_discord, _client()
    async with running_bot(fake, client):
        channel = client.get_channel(int(fake.channel_id))
        await fake.send_user_message("hello everyone")
        await fake.send_user_message("// alice, see you later", author=fake.owner)
        await fake.send_user_message("beep boop", author=other_bot())
        await fake.send_user_message("what is the moon?", author=fake.owner)
        await channel.send("The moon is")  # one answer split in two messages
        await channel.send("a satellite.")
        await channel.send("-# 2 earlier messages were left out")
        await fake.send_user_message("   //not for the bot either")
        await fake.send_user_message("thanks")
        question = await _question(client, fake, "and the sun?", author=fake.owner)
        history = await listen_history(question, client.user.id, 20)
    assert turns(history) == [
        ("user", "hello everyone", "Alice"),
        ("user", "what is the moon?", "Owner"),
        ("assistant", "The moon is\na satellite.", None),
        ("user", "thanks", "Alice"),
    ]
    assert history.left_out == 0
    assert history_reads(fake)[-1]["limit"] == "20" and history_reads(fake)[-1]["before"] == str(question.id)


async def test_the_depth_is_honoured_and_zero_reads_nothing(fake_discord: FakeDiscord) -> None:
    fake, client = fake_discord, _client()
    async with running_bot(fake, client):
        for n in range(1, 6):
            await fake.send_user_message(f"message {n}", author=fake.owner if n % 2 else None)
        question = await _question(client, fake, "the question")
        three = await listen_history(question, client.user.id, 3)
        reads = len(history_reads(fake))
        none = await listen_history(question, client.user.id, 0)
        assert len(history_reads(fake)) == reads  # depth 0: no request at all
    assert turns(three) == [("user", "message 3", "Owner"), ("user", "message 4", "Alice"),
                            ("user", "message 5", "Owner")]
    assert none.messages == [] and none.sources == []


async def test_a_history_opening_with_the_bot_starts_at_the_first_member(fake_discord: FakeDiscord) -> None:
    """Providers want the history to open with a user turn: an answer cut in half by the
    depth is dropped rather than sent without its question."""
    fake, client = fake_discord, _client()
    async with running_bot(fake, client):
        channel = client.get_channel(int(fake.channel_id))
        await fake.send_user_message("first question")
        await channel.send("first answer")
        await fake.send_user_message("second question", author=fake.owner)
        question = await _question(client, fake, "third")
        history = await listen_history(question, client.user.id, 2)
    assert turns(history) == [("user", "second question", "Owner")]
    assert [m.content for m in history.sources] == ["second question"]


async def test_an_unreadable_channel_gives_an_empty_history(fake_discord: FakeDiscord) -> None:
    fake, client = fake_discord, _client()
    async with running_bot(fake, client):
        await fake.send_user_message("earlier")
        question = await _question(client, fake, "now")
        fake.fail("GET", rf"/channels/{fake.channel_id}/messages$", 403, code=50001)
        history = await listen_history(question, client.user.id, 10)
    assert history.messages == []
