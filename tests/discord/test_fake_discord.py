"""The fake Discord against a minimal real discord.py client (testing-notes §3)."""

from __future__ import annotations

import io

import aiohttp
import discord
import pytest
from discord import app_commands

from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord


class EchoClient(discord.Client):
    """Replies `echo: <text>` then edits it; records what it saw."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents, **fast_ready_kwargs())
        self.seen: list[discord.Message] = []
        self.tree = app_commands.CommandTree(self)
        self.modal_values: list[str] = []

    async def setup_hook(self) -> None:
        @self.tree.command(name="ping", description="pong")
        async def ping(interaction: discord.Interaction) -> None:
            await interaction.response.send_message(f"pong {interaction.locale.value}", ephemeral=True)

        @self.tree.command(name="slow", description="deferred")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.edit_original_response(content="done")
            await interaction.followup.send("follow-up")

        client = self

        class KeyModal(discord.ui.Modal, title="Key"):
            key = discord.ui.TextInput(label="key", custom_id="key")

            async def on_submit(self, interaction: discord.Interaction) -> None:
                client.modal_values.append(self.key.value)
                await interaction.response.send_message("saved", ephemeral=True)

        @self.tree.command(name="key", description="modal")
        async def key(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(KeyModal(custom_id="key-modal"))

        await self.tree.sync()

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot:
            return
        self.seen.append(message)
        if message.content.startswith("file"):
            await message.channel.send("report", embed=discord.Embed(title="T", description="D"),
                                       file=discord.File(io.BytesIO(b"abc"), filename="r.txt"))
            return
        async with message.channel.typing():
            sent = await message.reply("echo", mention_author=False,
                                       allowed_mentions=discord.AllowedMentions.none())
        await sent.edit(content=f"echo: {message.content}")


async def test_ready_message_reply_and_edit(fake_discord: FakeDiscord) -> None:
    client = EchoClient()
    async with running_bot(fake_discord, client) as run:
        assert client.user.id == int(fake_discord.bot_user["id"])
        assert client.get_channel(int(fake_discord.channel_id)).name == "general"
        user_msg = await fake_discord.send_user_message("hello @everyone")
        await run.wait_for(lambda: any(m.content.startswith("echo:") for m in fake_discord.bot_messages()))
    [reply] = fake_discord.bot_messages()
    assert reply.history == ["echo", "echo: hello @everyone"]
    assert reply.message_reference["message_id"] == user_msg.id
    assert reply.allowed_mentions == {"parse": [], "replied_user": False}
    assert len(reply.edit_times) == 1
    assert [c for c, _ in fake_discord.typing] == [fake_discord.channel_id]
    assert isinstance(client.seen[0].channel, discord.TextChannel)
    assert fake_discord.rate_limited == []


async def test_dm_and_reply_chain(fake_discord: FakeDiscord) -> None:
    client = EchoClient()
    async with running_bot(fake_discord, client) as run:
        first = await fake_discord.send_user_message("one")
        await fake_discord.send_user_message("two", reply_to=first.id)
        await fake_discord.send_user_message("in private", dm=True)
        await run.wait_for(lambda: len(client.seen) == 3)
        fetched = await client.seen[1].channel.fetch_message(int(first.id))
    assert client.seen[1].reference.message_id == int(first.id)
    assert client.seen[1].reference.resolved.content == "one"
    assert fetched.content == "one"
    assert client.seen[2].guild is None and isinstance(client.seen[2].channel, discord.DMChannel)


async def test_files_and_embeds_multipart(fake_discord: FakeDiscord) -> None:
    client = EchoClient()
    async with running_bot(fake_discord, client) as run:
        await fake_discord.send_user_message("file please")
        await run.wait_for(lambda: bool(fake_discord.bot_messages()))
    [msg] = fake_discord.bot_messages()
    assert msg.content == "report"
    assert msg.embeds[0]["title"] == "T" and msg.embeds[0]["description"] == "D"
    assert msg.files == {"r.txt": b"abc"} and msg.attachments[0]["filename"] == "r.txt"


async def test_slash_commands_modal_and_followups(fake_discord: FakeDiscord) -> None:
    client = EchoClient()
    async with running_bot(fake_discord, client) as run:
        assert {c["name"] for c in fake_discord.commands["global"]} == {"ping", "slow", "key"}
        await fake_discord.send_interaction(name="ping", locale="ja")
        await run.wait_for(lambda: any(m.content == "pong ja" for m in fake_discord.bot_messages()))
        await fake_discord.send_interaction(name="slow")
        await run.wait_for(lambda: any(m.content == "follow-up" for m in fake_discord.bot_messages()))
        await fake_discord.send_interaction(name="key")
        await run.wait_for(lambda: any(r["type"] == 9 for r in fake_discord.interaction_responses))
        await fake_discord.send_interaction(modal_custom_id="key-modal", modal_values={"key": "sk-secret"})
        await run.wait_for(lambda: client.modal_values == ["sk-secret"])
    contents = [m.content for m in fake_discord.bot_messages()]
    assert "done" in contents  # the deferred original was edited
    assert [r["type"] for r in fake_discord.interaction_responses] == [4, 5, 9, 4]
    assert fake_discord.interaction_responses[0]["data"]["flags"] == 64


async def test_faults_map_to_discord_py_errors(fake_discord: FakeDiscord) -> None:
    client = EchoClient()
    async with running_bot(fake_discord, client):
        channel = client.get_channel(int(fake_discord.channel_id))
        sent = await channel.send("x")
        await fake_discord.delete_message(sent.id)
        with pytest.raises(discord.NotFound) as gone:
            await sent.edit(content="y")
        assert gone.value.code == 10008
        fake_discord.fail("POST", r"/channels/\d+/messages$", 503)
        with pytest.raises(discord.DiscordServerError):
            await channel.send("z")
        fake_discord.forbid_channel(fake_discord.channel_id)
        with pytest.raises(discord.Forbidden) as denied:
            await channel.send("w")
        assert denied.value.code == 50013


async def test_headers_and_429_the_way_discord_answers(fake_discord: FakeDiscord) -> None:
    url = f"{fake_discord.api_url}/channels/{fake_discord.channel_id}/messages"
    async with aiohttp.ClientSession() as http:
        statuses = []
        for i in range(6):
            async with http.post(url, json={"content": str(i)}) as resp:
                statuses.append(resp.status)
                headers, body = resp.headers, await resp.json()
                assert resp.headers["Content-Type"] == "application/json"
                assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
                        "X-RateLimit-Reset-After", "X-RateLimit-Bucket"} <= set(resp.headers)
    assert statuses == [200] * 5 + [429]
    assert headers["Via"] == "1.1 google" and headers["X-RateLimit-Remaining"] == "0"
    assert body["global"] is False and 0 < body["retry_after"] <= 5
    assert len(fake_discord.rate_limited) == 1


async def test_discord_py_retries_a_429_after_retry_after() -> None:
    async with FakeDiscord(message_limit=2, message_window=0.4) as fake:
        client = EchoClient()
        async with running_bot(fake, client):
            url = f"{fake.api_url}/channels/{fake.channel_id}/messages"
            async with aiohttp.ClientSession() as http:  # another sender drains the bucket
                for _ in range(2):
                    async with http.post(url, json={"content": "other"}) as resp:
                        assert resp.status == 200
            channel = client.get_channel(int(fake.channel_id))
            sent = await channel.send("after the wait")
        assert len(fake.rate_limited) == 1
        assert fake.messages[str(sent.id)].content == "after the wait"


async def test_global_rate_limit_and_login_token(fake_discord: FakeDiscord) -> None:
    fake_discord.global_limit = 1
    async with aiohttp.ClientSession() as http:
        for expected in (200, 429):
            async with http.get(f"{fake_discord.api_url}/users/@me",
                                headers={"Authorization": f"Bot {BOT_TOKEN}"}) as resp:
                assert resp.status == expected
                body = await resp.json()
    assert resp.headers["X-RateLimit-Global"] == "true" and resp.headers["Via"] == "1.1 google"
    assert body["global"] is True
    assert len(fake_discord.rate_limited) == 1


async def test_harness_fails_loudly_when_a_gateway_parser_kills_the_client(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = EchoClient()
    with pytest.raises(AssertionError, match="KeyError"):
        async with running_bot(fake, client) as run:
            payload = await fake.send_interaction(name="ping")
            await run.wait_for(lambda: bool(fake.interaction_responses))
            broken = {k: v for k, v in payload.items() if k != "attachment_size_limit"}
            await fake.dispatch("INTERACTION_CREATE", broken)
            await run.wait_for(lambda: False, timeout=5)  # never true: only the bot's death ends it
