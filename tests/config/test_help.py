"""`/help` through the fake Discord: the commands the invoker may use, one line each,
grouped, in their language, as mentions of the ids the bot synced; and the renamed
commands' old names still answering with their new name."""

from __future__ import annotations

import re
from typing import Any

from discord import app_commands

from tests.support.drive_commands import NO_PERMISSIONS, command, group, member, sub, submit_modal
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord

MENTION = re.compile(r"</([a-z][a-z0-9 _-]*):(\d+)>")


def root_id(fake: FakeDiscord, name: str) -> str:
    return next(c["id"] for c in fake.commands["global"] if c["name"] == name)


def help_text(reply) -> tuple[str, list[dict[str, Any]], str]:
    """The embed's title and its fields (the whole list fits one embed)."""
    embeds = reply.data["embeds"]
    assert len(embeds) == 1 and reply.ephemeral and reply.type == 4
    fields = embeds[0]["fields"]
    assert len(fields) <= 25 and all(len(f["value"]) <= 1024 for f in fields)  # Discord's embed limits
    assert len(embeds[0]["title"]) + sum(len(f["name"]) + len(f["value"]) for f in fields) <= 6000
    return embeds[0]["title"], embeds[0]["fields"], (embeds[0].get("footer") or {}).get("text", "")


def listed(fields: list[dict[str, Any]]) -> dict[str, str]:
    """Each listed command's path (from its mention) -> the id it mentions."""
    return {m.group(1): m.group(2) for f in fields for m in MENTION.finditer(f["value"])}


RENAMED = {"personal key-set", "personal key-remove"}  # old names kept for a release, not listed


def fake_followups(fake: FakeDiscord) -> list:
    """Every interaction's follow-up messages (not its answer), in order."""
    return [fake.messages[i] for inter in fake.interactions.values() for i in inter.followup_ids]


def manager_fields(fake: FakeDiscord, reply) -> list[dict[str, Any]]:
    """The fields of the reply's embed and of its follow-ups' (each within Discord's embed limits)."""
    embeds = [*reply.data["embeds"], *(e for m in fake_followups(fake) for e in m.embeds)]
    for embed in embeds:
        fields = embed["fields"]
        assert len(fields) <= 25 and all(len(f["value"]) <= 1024 for f in fields)
        assert len(embed.get("title") or "") + sum(len(f["name"]) + len(f["value"]) for f in fields) <= 6000
    return [f for embed in embeds for f in embed["fields"]]


def runnable(bot) -> set[str]:
    return {c.qualified_name for c in bot.tree.walk_commands() if isinstance(c, app_commands.Command)}


async def test_help_lists_a_members_commands_and_a_managers_all(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        as_member = await command(run, fake, "help", permissions=NO_PERMISSIONS)
        as_manager = await command(run, fake, "help")
        every = runnable(bot)
        # A manager's list is longer than one embed holds: the rest follows in follow-ups.
        await run.wait_for(lambda: set(listed(manager_fields(fake, as_manager))) >= every - RENAMED)
    title, fields, footer = help_text(as_member)
    member_sees = listed(fields)
    assert title == "Commands you can use here"
    assert {"help", "status", "stop", "personal key set", "personal model", "personal check"} <= set(member_sees)
    assert not {"keys add", "model set", "settings history", "usage", "limits show"} & set(member_sees)
    assert footer == "Members with the Manage Server permission have more commands here."
    assert member_sees["personal key set"] == root_id(fake, "personal")
    assert "</personal key set:" in next(f["value"] for f in fields if f["name"] == "Your own key and model")

    fields = manager_fields(fake, as_manager)
    footer = (fake_followups(fake)[-1].embeds[-1].get("footer") or {}).get("text", "")
    manager_sees = listed(fields)
    # Everything the tree has (a command added later too), except the old names kept for a release.
    assert set(manager_sees) == every - RENAMED
    assert manager_sees["keys add"] == root_id(fake, "keys") and footer == ""
    assert [f["name"] for f in fields if f["name"] != "\u200b"] == ["Asking and answers", "Your own key and model", "Server settings",
                                           "Keys and models", "Limits and usage", "Channels and access"]
    synced = fake.commands["global"]
    assert len(synced) <= 100  # Discord's global command limit, and 25 entries under any group
    assert all(len(node.get("options") or []) <= 25 for root in synced
               for node in [root, *(o for o in root.get("options") or [] if o["type"] == 2)])
    lines = [line for f in fields for line in f["value"].splitlines()]
    assert len(lines) == len(manager_sees)  # one line each
    assert f"</keys add:{root_id(fake, 'keys')}> — Add an API key to the pool (typed into a private form)" in lines


async def test_help_in_japanese_and_in_a_dm(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        ja = await command(run, fake, "help", locale="ja")
        dm = await command(run, fake, "help", dm=True, user=member(fake, "dora"))
    title, fields, _ = help_text(ja)
    assert title == "ここで使えるコマンド"
    assert [f["name"] for f in fields if f["name"] != "\u200b"][:3] == ["質問と回答", "自分のキーとモデル", "サーバー設定"]
    keys_line = next(line for f in fields for line in f["value"].splitlines() if line.startswith("</keys add:"))
    assert keys_line.endswith("APIキーをプールに追加します（非公開フォームで入力）")

    _, fields, footer = help_text(dm)
    dm_sees = set(listed(fields))
    assert {"help", "status", "personal key set", "personal model"} <= dm_sees
    assert not {"keys add", "settings history", "usage", "channels list", "persona show"} & dm_sees
    assert footer == "Inside a server there are more commands."


async def test_the_old_names_still_work_and_name_the_new_ones(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    erin = member(fake, "erin")
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "personal", sub("key-set"), user=erin, permissions=NO_PERMISSIONS)
        stored = await submit_modal(run, fake, form, "sk-erin-0000-e1e1", user=erin, permissions=NO_PERMISSIONS)
        removed = await command(run, fake, "personal", sub("key-remove"), user=erin, permissions=NO_PERMISSIONS,
                                locale="ja")
        form = await command(run, fake, "personal", group("key", sub("set")), user=erin, permissions=NO_PERMISSIONS)
        new = await submit_modal(run, fake, form, "sk-erin-0000-e2e2", user=erin, permissions=NO_PERMISSIONS)
        cleared = await command(run, fake, "personal", group("key", sub("clear")), user=erin,
                                permissions=NO_PERMISSIONS)
    personal = root_id(fake, "personal")
    assert stored.content.splitlines()[:2] == [
        f"</personal key-set:{personal}> is now </personal key set:{personal}>; the old name goes in the next release.",
        "Your key (\u2026e1e1) is stored for this server."]
    assert removed.content.splitlines() == [
        f"</personal key-remove:{personal}> は </personal key clear:{personal}> になりました。古い名前は次のリリースでなくなります。",
        "このサーバー用のあなたのキーを削除しました。"]
    assert new.content.splitlines()[0] == "Your key (\u2026e2e2) is stored for this server."
    assert cleared.content == "Your key for this server was deleted."
    synced = next(c for c in fake.commands["global"] if c["name"] == "personal")
    old = next(o for o in synced["options"] if o["name"] == "key-set")
    assert old["description"] == "Old name of /personal key set: store your own API key"
    assert old["description_localizations"]["ja"] == "/個人設定 キー 登録 の古い名前：自分のAPIキーを保存します"
