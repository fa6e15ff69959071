"""DiscordMessageSink through the real discord.py client against the fake Discord."""

from __future__ import annotations

import asyncio

import discord
import pytest

from bot.edge.answered import held
from bot.edge.sink import DiscordMessageSink
from bot.load.observability import discord_http_trace
from stream.sink import (
    EmbedSpec,
    MessageGone,
    SentMessage,
    SinkError,
    SinkForbidden,
    SinkUnavailable,
)
from tests.support.drive_discord_client import RunningBot, fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord

NONE = {"parse": [], "replied_user": False}


class Recorder(discord.Client):
    def __init__(self, **options: object) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents, **fast_ready_kwargs(), **options)
        self.seen: list[discord.Message] = []

    async def on_message(self, message: discord.Message) -> None:
        if not message.author.bot:
            self.seen.append(message)


async def _sink_for_message(fake: FakeDiscord, run: RunningBot, text: str = "question") -> DiscordMessageSink:
    client = run.bot
    assert isinstance(client, Recorder)
    await fake.send_user_message(text)
    await run.wait_for(lambda: len(client.seen) == 1)
    trigger = client.seen[0]
    return DiscordMessageSink(trigger.channel, reply_to=trigger, client=client)


async def test_reply_edit_and_mentions_never_ping(fake_discord: FakeDiscord) -> None:
    async with running_bot(fake_discord, Recorder()) as run:
        sink = await _sink_for_message(fake_discord, run)
        first = await sink.send("@everyone look <@&123> <@456> @here", reply=True)
        await sink.edit(first, "@everyone edited")
        second = await sink.send("plain continuation")
    stored = fake_discord.messages[str(first.id)]
    trigger = next(m for m in fake_discord.messages.values() if m.content == "question")
    assert stored.message_reference["message_id"] == trigger.id
    assert stored.history == ["@everyone look <@&123> <@456> @here", "@everyone edited"]
    writes = [r for r in fake_discord.requests if r.method in ("POST", "PATCH") and "/messages" in r.path]
    assert len(writes) == 3
    for request in writes:  # every send and every edit forbids every ping
        mentions = request.body["allowed_mentions"]
        assert mentions["parse"] == [] and not mentions.get("users") and not mentions.get("roles")
        assert mentions.get("replied_user", False) is False
    follow = fake_discord.messages[str(second.id)]
    assert follow.message_reference is None and follow.allowed_mentions == NONE
    assert first.channel_id == int(fake_discord.channel_id)


async def test_an_edit_that_empties_the_bucket_returns_once_discord_answered() -> None:
    """discord.py holds the request that empties a bucket until the bucket resets; the
    sink returns when Discord's answer arrives (the bot's HTTP trace reports it), and the
    next edit still waits for the reset inside discord.py: nothing is refused."""
    window = 3.0
    async with (FakeDiscord(message_limit=3, message_window=window) as fake,
                running_bot(fake, Recorder(http_trace=discord_http_trace(None))) as run):
        sink = await _sink_for_message(fake, run)
        loop = asyncio.get_running_loop()
        began = loop.time()
        sent = await sink.send("one", reply=True)
        await sink.edit(sent, "one two")
        await sink.edit(sent, "one two three")  # the bucket's third and last request
        answered = loop.time() - began
        assert held() == 1  # discord.py still sits on it, until the bucket resets
        await sink.edit(sent, "one two three four")  # waits inside discord.py for the reset
        waited = loop.time() - began
        await run.wait_for(lambda: held() == 0)
    assert answered < window / 2 <= window - 0.1 <= waited
    assert fake.messages[str(sent.id)].history[-1] == "one two three four"
    assert fake.rate_limited == []


async def test_deleted_message_raises_message_gone(fake_discord: FakeDiscord) -> None:
    async with running_bot(fake_discord, Recorder()) as run:
        sink = await _sink_for_message(fake_discord, run)
        sent = await sink.send("partial", reply=True)
        await fake_discord.delete_message(sent.id)
        with pytest.raises(MessageGone):
            await sink.edit(sent, "partial and more")
        await sink.delete(sent)  # deleting what is already gone is not an error
        own = await sink.send("mine")
        await sink.delete(own)
    assert fake_discord.messages[str(own.id)].deleted


async def test_forbidden_and_unavailable() -> None:
    async with FakeDiscord(message_limit=50) as fake_discord, running_bot(fake_discord, Recorder()) as run:
        sink = await _sink_for_message(fake_discord, run)
        sent = await sink.send("ok")
        fake_discord.fail("PATCH", r"/messages/\d+$", 503)
        with pytest.raises(SinkUnavailable):
            await sink.edit(sent, "later")
        fake_discord.fail("POST", r"/messages$", 400, code=50035, message="Invalid Form Body")
        with pytest.raises(SinkError) as rejected:
            await sink.send("bad")
        assert type(rejected.value) is SinkError
        fake_discord.forbid_channel(fake_discord.channel_id)
        with pytest.raises(SinkForbidden):
            await sink.send("no")
        with pytest.raises(SinkForbidden):
            await sink.edit(sent, "no")


async def test_embed_file_and_typing(fake_discord: FakeDiscord) -> None:
    async with running_bot(fake_discord, Recorder()) as run:
        sink = await _sink_for_message(fake_discord, run)
        await sink.typing()
        spec = EmbedSpec(title="Error", description="The provider failed", color=0xE74C3C,
                         fields=[("Details", "overloaded")], footer="Provider: openai")
        embedded = await sink.send_embed(spec, reply=True)
        filed = await sink.send_file("reasoning.txt", b"long thoughts", embed=EmbedSpec(title="Thoughts"))
    assert [c for c, _ in fake_discord.typing] == [fake_discord.channel_id]
    [embed] = fake_discord.messages[str(embedded.id)].embeds
    assert embed["title"] == "Error" and embed["description"] == "The provider failed"
    assert embed["color"] == 0xE74C3C and embed["footer"]["text"] == "Provider: openai"
    assert embed["fields"] == [{"name": "Details", "value": "overloaded", "inline": False}]
    stored = fake_discord.messages[str(filed.id)]
    assert stored.files == {"reasoning.txt": b"long thoughts"}
    assert stored.embeds[0]["title"] == "Thoughts" and stored.allowed_mentions == NONE


async def test_rate_limit_reads_discord_py_bucket(fake_discord: FakeDiscord) -> None:
    async with running_bot(fake_discord, Recorder()) as run:
        sink = await _sink_for_message(fake_discord, run)
        assert sink.rate_limit() is None  # nothing written to this channel yet
        sent = await sink.send("one")
        after_send = sink.rate_limit()
        await sink.edit(sent, "two")
        after_edit = sink.rate_limit()
    assert after_send is not None and after_send.limit == 5 and after_send.remaining == 4
    assert 0 < after_send.reset_after <= 5
    assert after_edit is not None and after_edit.remaining == 3


async def test_sink_without_client_knows_no_rate_limit(fake_discord: FakeDiscord) -> None:
    async with running_bot(fake_discord, Recorder()) as run:
        channel = run.bot.get_channel(int(fake_discord.channel_id))
        sink = DiscordMessageSink(channel)
        sent = await sink.send("hello", reply=True)  # no trigger: a plain message
        assert isinstance(sent, SentMessage) and sink.rate_limit() is None
    assert fake_discord.messages[str(sent.id)].message_reference is None
