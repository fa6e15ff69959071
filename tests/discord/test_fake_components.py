"""Message components in the fake Discord, against the real discord.py client: buttons
stored and served, Discord's component rules (400 Invalid Form Body), button presses
(INTERACTION_CREATE type 3) reaching persistent `DynamicItem`s, and the interaction
responses a press gets (ephemeral messages with files, deferred updates, updates,
follow-ups), each answered once and outside the global rate limit."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord
import pytest
from discord.http import Route

from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord

MANAGE_GUILD = str(1 << 5)
THOUGHTS = b"first I thought, then I answered"


@dataclass
class Press:
    mode: str
    message_id: int
    custom_id: str
    user_id: int
    manage_guild: bool
    in_dm: bool


class Act(discord.ui.DynamicItem[discord.ui.Button], template=r"act:(?P<mode>[a-z]+):(?P<n>[0-9]+)"):
    """A persistent button: `act:<mode>:<n>`; the mode says how the press is answered."""

    def __init__(self, mode: str, n: int, label: str = "Act") -> None:
        super().__init__(discord.ui.Button(label=label, custom_id=f"act:{mode}:{n}",
                                           style=discord.ButtonStyle.secondary))
        self.mode = mode

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> Act:
        return cls(match["mode"], int(match["n"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        client: ButtonClient = interaction.client  # type: ignore[assignment]
        client.presses.append(Press(self.mode, interaction.message.id, interaction.data["custom_id"],
                                    interaction.user.id, interaction.permissions.manage_guild,
                                    interaction.guild is None))
        if self.mode == "file":
            await interaction.response.send_message(
                "the reasoning", ephemeral=True, file=discord.File(io.BytesIO(THOUGHTS), filename="reasoning.txt"))
        elif self.mode == "defer":
            await interaction.response.defer()
            await interaction.followup.send("working on it", ephemeral=True)
        elif self.mode == "stop":
            await interaction.response.defer()
            await interaction.edit_original_response(content="stopped", view=None)
        elif self.mode == "update":
            await interaction.response.edit_message(content="updated", view=None)
        client.answered.append(self.mode)


class ButtonClient(discord.Client):
    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default(), **fast_ready_kwargs())
        self.presses: list[Press] = []
        self.answered: list[str] = []

    async def setup_hook(self) -> None:
        self.add_dynamic_items(Act)


def view_of(*items: discord.ui.Item[Any]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view


def button(custom_id: str, label: str = "B") -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


def row(*items: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(items)}


async def raw_send(client: discord.Client, channel_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """POST a message body exactly as given, through discord.py's own HTTP client."""
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=channel_id)
    return await client.http.request(route, json=payload)


async def test_components_are_stored_replaced_kept_and_served(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client):
        channel = client.get_channel(int(fake.channel_id))
        sent = await channel.send("streaming…", view=view_of(Act("stop", 1, "Stop"), Act("update", 1, "Regenerate")))
        assert [c.custom_id for c in sent.components[0].children] == ["act:stop:1", "act:update:1"]
        await sent.edit(content="still streaming")  # no view: the buttons stay
        edited = await sent.edit(content="the answer", view=None)  # view=None: `components: []`
        fetched = await channel.fetch_message(sent.id)
    stored = fake.messages[str(sent.id)]
    assert stored.components == [] and edited.components == [] and fetched.components == []
    assert stored.history == ["streaming…", "still streaming", "the answer"]
    assert [stored.custom_ids_at(i) for i in range(3)] == [["act:stop:1", "act:update:1"]] * 2 + [[]]
    assert stored.component_history[0][0]["components"][0]["label"] == "Stop"


async def test_component_rules_answer_invalid_form_body() -> None:
    client = ButtonClient()
    ok = [row(button("a"), button("b"))]
    bad_bodies = {
        "six rows": [row(button(f"r{i}")) for i in range(6)],
        "six buttons in a row": [row(*(button(f"b{i}") for i in range(6)))],
        "an empty row": [row()],
        "a 101-character custom_id": [row(button("x" * 101))],
        "an empty custom_id": [row(button(""))],
        "no custom_id": [row({"type": 2, "style": 1, "label": "B"})],
        "an 81-character label": [row(button("a", "L" * 81))],
        "a duplicate custom_id": [row(button("same")), row(button("same"))],
        "a link button with a custom_id": [row({"type": 2, "style": 5, "label": "L", "url": "https://x.test",
                                                "custom_id": "c"})],
        "a link button without a url": [row({"type": 2, "style": 5, "label": "L"})],
        "a button at the top level": [button("top")],
        "a select beside a button": [row({"type": 3, "custom_id": "s", "options": [{"label": "o", "value": "o"}]},
                                         button("b"))],
    }
    # Refused requests use the channel's message bucket too: a roomy one keeps this quick.
    async with FakeDiscord(message_limit=50) as fake, running_bot(fake, client):
        channel = client.get_channel(int(fake.channel_id))
        errors: dict[str, discord.HTTPException] = {}
        for name, components in bad_bodies.items():
            with pytest.raises(discord.HTTPException) as refused:
                await raw_send(client, fake.channel_id, {"content": name, "components": components})
            errors[name] = refused.value
        link_row = [row({"type": 2, "style": 5, "label": "Docs", "url": "https://docs.test"}, button("ok"))]
        sent = await raw_send(client, fake.channel_id, {"content": "fine", "components": ok + link_row})
        with pytest.raises(discord.HTTPException) as duplicate_view:  # the real View API, two equal ids
            await channel.send("dup", view=view_of(Act("stop", 7), Act("stop", 7)))
        with pytest.raises(discord.HTTPException) as bad_edit:
            await channel.get_partial_message(int(sent["id"])).edit(view=view_of(Act("stop", 8, "S" * 81)))
    assert {(e.status, e.code) for e in errors.values()} == {(400, 50035)}
    assert (duplicate_view.value.status, duplicate_view.value.code) == (400, 50035)
    assert (bad_edit.value.status, bad_edit.value.code) == (400, 50035)
    assert errors["a duplicate custom_id"].text.endswith(
        "In components.1.components.0.custom_id: Component custom id was already specified")
    assert "components.0.components.0.custom_id" in errors["a 101-character custom_id"].text
    assert [m.content for m in fake.bot_messages()] == ["fine"]  # nothing refused was stored
    assert fake.messages[sent["id"]].custom_ids == ["a", "b", "ok"]
    assert fake.messages[sent["id"]].history == ["fine"]  # the refused edit changed nothing


async def test_a_press_reaches_the_dynamic_item_and_its_ephemeral_file_reply_is_stored(
        fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client) as run:
        channel = client.get_channel(int(fake.channel_id))
        sent = await channel.send("an answer", view=view_of(Act("file", 3, "Reasoning")))
        payload = await fake.press(sent.id, "act:file:3", permissions=MANAGE_GUILD)
        await run.wait_for(lambda: client.answered == ["file"])
        history = [m async for m in channel.history()]
    assert client.presses == [Press("file", sent.id, "act:file:3", int(fake.member_user["id"]), True, False)]
    inter = fake.interaction(payload["token"])
    assert (inter.type, inter.response_type, inter.message_id, inter.custom_id) == (3, 4, str(sent.id), "act:file:3")
    [reply] = fake.interaction_messages(payload["token"])
    assert reply.ephemeral and reply.content == "the reasoning" and reply.interaction_id == payload["id"]
    assert reply.files == {"reasoning.txt": THOUGHTS}
    assert reply.attachments[0]["filename"] == "reasoning.txt" and reply.attachments[0]["size"] == len(THOUGHTS)
    # Ephemeral: the channel (and its history) shows only the answer, not the reply.
    assert [m.id for m in fake.visible_messages(fake.channel_id)] == [str(sent.id)]
    assert [m.id for m in history] == [sent.id]
    assert fake.bot_messages(ephemeral=True) == [reply]


async def test_a_deferred_press_then_an_ephemeral_follow_up(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client) as run:
        channel = client.get_channel(int(fake.channel_id))
        sent = await channel.send("an answer", view=view_of(Act("defer", 4)))
        payload = await fake.press(sent.id, "act:defer:4")
        await run.wait_for(lambda: client.answered == ["defer"])
    assert [r["type"] for r in fake.interaction_responses] == [6]  # a component's defer: no message
    [follow_up] = fake.interaction_messages(payload["token"])
    assert follow_up.content == "working on it" and follow_up.ephemeral
    assert fake.interaction(payload["id"]).followup_ids == [follow_up.id]
    assert fake.visible_messages(fake.channel_id) == [fake.messages[str(sent.id)]]
    assert fake.messages[str(sent.id)].history == ["an answer"]  # a deferred update changes nothing


async def test_stop_and_update_edit_the_pressed_message(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client) as run:
        channel = client.get_channel(int(fake.channel_id))
        streaming = await channel.send("streaming", view=view_of(Act("stop", 5, "Stop")))
        other = await channel.send("another", view=view_of(Act("update", 6)))
        await fake.press(streaming.id, "act:stop:5")
        await fake.press(other.id, "act:update:6")
        await run.wait_for(lambda: sorted(client.answered) == ["stop", "update"])
        with pytest.raises(AssertionError, match="no button 'act:stop:5'"):  # gone: Discord sends no press
            await fake.press(streaming.id, "act:stop:5")
    stopped, updated = fake.messages[str(streaming.id)], fake.messages[str(other.id)]
    assert stopped.history == ["streaming", "stopped"] and stopped.custom_ids_at(0) == ["act:stop:5"]
    assert stopped.components == [] and updated.content == "updated" and updated.components == []
    assert sorted(r["type"] for r in fake.interaction_responses) == [6, 7]


async def test_a_press_is_refused_in_the_test_unless_the_button_is_on_the_message(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client):
        channel = client.get_channel(int(fake.channel_id))
        plain = await channel.send("no buttons")
        disabled = await raw_send(client, fake.channel_id, {"content": "off", "components": [
            row({**button("act:file:9"), "disabled": True})]})
        with pytest.raises(AssertionError, match="no button"):
            await fake.press(plain.id, "act:file:1")
        with pytest.raises(AssertionError, match="disabled"):
            await fake.press(disabled["id"], "act:file:9")
        with pytest.raises(AssertionError, match="no message"):
            await fake.press(1, "act:file:1")
    assert fake.interactions == {} and client.presses == []


async def test_an_interaction_is_answered_once_and_unknown_ones_not_at_all(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client) as run:
        channel = client.get_channel(int(fake.channel_id))
        sent = await channel.send("an answer", view=view_of(Act("file", 10)))
        payload = await fake.press(sent.id, "act:file:10")
        await run.wait_for(lambda: client.answered == ["file"])
        url = f"{fake.api_url}/interactions/{payload['id']}/{payload['token']}/callback"
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json={"type": 4, "data": {"content": "again"}}) as resp:
                twice = resp.status, await resp.json()
            fake.accept_unknown_interactions = False
            async with http.post(f"{fake.api_url}/interactions/1/tok/callback", json={"type": 5}) as resp:
                unknown = resp.status, await resp.json()
            follow_up = f"{fake.api_url}/webhooks/{fake.application_id}/{payload['token']}/messages/@original"
            async with http.get(follow_up) as resp:
                original = resp.status, await resp.json()
    assert twice == (400, {"message": "Interaction has already been acknowledged.", "code": 40060})
    assert unknown == (404, {"message": "Unknown interaction", "code": 10062})
    assert fake.interaction(payload["id"]).refused == [40060]
    assert original[0] == 200 and original[1]["content"] == "the reasoning" and original[1]["flags"] & 64
    assert len(fake.interaction_responses) == 1  # refused answers are not responses


async def test_interaction_requests_are_outside_the_global_limit(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client) as run:
        channel = client.get_channel(int(fake.channel_id))
        sent = await channel.send("an answer", view=view_of(Act("defer", 11)))
        counted, exempt = fake.global_counted, fake.interaction_requests
        fake.global_limit = 1
        async with aiohttp.ClientSession() as http:  # another caller uses up this second's budget
            async with http.get(f"{fake.api_url}/users/@me") as resp:
                assert resp.status in (200, 429)
        await fake.press(sent.id, "act:defer:11")
        await run.wait_for(lambda: client.answered == ["defer"])
    assert fake.interaction_requests == exempt + 2  # the callback and the follow-up
    assert fake.global_counted == counted + 1  # only the other caller's request
    assert not any("/interactions/" in r.path or "/webhooks/" in r.path for r in fake.rate_limited)


async def test_a_press_in_a_dm(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    client = ButtonClient()
    async with running_bot(fake, client) as run:
        sent = await raw_send(client, fake.dm_channel_id, {"content": "in private", "components": [
            row(button("act:file:12", "Reasoning"))]})
        payload = await fake.press(sent["id"], "act:file:12")
        await run.wait_for(lambda: client.answered == ["file"])
    assert "member" not in payload and payload["user"]["id"] == fake.member_user["id"]
    [press] = client.presses
    assert press.in_dm and press.message_id == int(sent["id"]) and press.user_id == int(fake.member_user["id"])
    [reply] = fake.interaction_messages(payload["token"])
    assert reply.channel_id == fake.dm_channel_id and reply.ephemeral and reply.files == {"reasoning.txt": THOUGHTS}
