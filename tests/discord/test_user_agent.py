"""Every request to Discord carries the bot's User-Agent, interaction replies included.

discord.py sends interaction responses, follow-ups and edits of the original response
through its webhook adapter, which sets no User-Agent (aiohttp's own default went out).
The HTTP trace of `bot.load.observability` gives those the bot's. A real discord.py client
against the local fake Discord, which records each request's User-Agent.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.load.observability import discord_http_trace
from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord


class Replier(discord.Client):
    """Answers /ping, and /slow with a deferral, an edit of the original and a follow-up."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default(), http_trace=discord_http_trace(),
                         **fast_ready_kwargs())
        self.tree = app_commands.CommandTree(self)

    async def setup_hook(self) -> None:
        @self.tree.command(name="ping", description="pong")
        async def ping(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("pong", ephemeral=True)

        @self.tree.command(name="slow", description="deferred")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.edit_original_response(content="done")
            await interaction.followup.send("follow-up")


async def test_every_request_carries_the_bots_user_agent_interaction_replies_included(
        fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = Replier()
    async with running_bot(fake, client) as run:
        await fake.send_interaction(name="ping")
        await fake.send_interaction(name="slow")
        await run.wait_for(lambda: any(r.method == "POST" and "/webhooks/" in r.path for r in fake.requests))
        expected = client.http.user_agent
    assert expected.startswith("DiscordBot (")
    interaction_paths = [r.path for r in fake.requests if "/interactions/" in r.path or "/webhooks/" in r.path]
    assert len(interaction_paths) >= 4, interaction_paths  # two callbacks, an edit, a follow-up
    wrong = [(r.method, r.path, r.user_agent) for r in fake.requests if r.user_agent != expected]
    assert wrong == []
