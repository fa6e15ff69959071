"""The Manage Server gate on every manager command, found by walking the command tree the
bot synced to the fake Discord (a command added later is covered without editing this)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from discord import app_commands
from sqlalchemy import func, select

from bot import repo
from bot.db.models import ServerApiKey
from tests.support.drive_commands import NO_PERMISSIONS, command, group, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord

MANAGE_GUILD_BIT = 1 << 5
REFUSED = "You need the Manage Server permission for this command."
GUILD_ONLY = "This command works only inside a server."
# What the issues named, checked to be among the commands the walk found (the walk itself
# needs no list: it takes every manager command from the tree).
KNOWN_MANAGER_COMMANDS = {
    "keys add", "keys list", "keys remove", "model set", "model endpoint", "model fallback add",
    "model fallback remove", "model fallback list", "model price", "model params", "model check",
    "settings verbatim-tools", "settings member-keys", "settings thought-log-set", "settings thought-log-clear",
    "persona set", "persona show", "persona clear", "channels mode", "channels allow", "channels deny",
    "channels list", "access block", "access unblock", "access require-role", "access unrequire-role",
    "access list", "limits set", "limits show", "usage", "settings history", "settings threads",
    "settings batch-seconds", "settings web-search", "settings read-links", "channels listen",
    "channels listen-stop",
}
# Everyone's commands: never behind the gate.
MEMBER_COMMANDS = {"status", "stop", "help", "personal key set", "personal key clear", "personal model",
                   "personal key-set", "personal key-remove"}


def code_manager_commands(bot) -> set[str]:
    """Every runnable command the bot defines under a root that asks for Manage Server:
    the walk over what Discord received must find exactly these."""
    names = set()
    for found in bot.tree.walk_commands():
        root = found.root_parent or found
        if isinstance(found, app_commands.Command) and root.default_permissions is not None \
                and root.default_permissions.manage_guild:
            names.add(found.qualified_name)
    return names


def manager_roots(fake: FakeDiscord) -> list[dict[str, Any]]:
    """Synced top-level commands that Discord shows only to Manage Server by default."""
    return [c for c in fake.commands["global"]
            if int(c.get("default_member_permissions") or 0) & MANAGE_GUILD_BIT]


def leaves(node: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    """(path below the root, the subcommand) for every runnable subcommand under `node`;
    a root without subcommands (`/usage`) is itself the one to run, at path ()."""
    children = node.get("options") or []
    if not path and not any(child["type"] in (1, 2) for child in children):
        yield (), node
        return
    for child in children:
        if child["type"] == 1:
            yield (*path, child["name"]), child
        elif child["type"] == 2:
            yield from leaves(child, (*path, child["name"]))


def filled(fake: FakeDiscord, subcommand: dict[str, Any]) -> tuple[list[dict], dict | None]:
    """Plausible values for the required options (and the resolved data a channel needs)."""
    values, resolved = [], None
    for option in subcommand.get("options") or []:
        if not option.get("required"):
            continue
        kind = option["type"]
        if kind == 7:
            value: Any = fake.thought_channel_id
            resolved = {"channels": {value: {"id": value, "type": 0, "name": "thought-log",
                                             "guild_id": fake.guild_id, "permissions": "0", "position": 1,
                                             "nsfw": False, "parent_id": None}}}
        elif kind in (8, 9):  # a role, or a mentionable given as a role
            value = fake.guild_id
            resolved = {"roles": {value: {"id": value, "name": "@everyone", "permissions": "0", "position": 0,
                                          "color": 0, "hoist": False, "managed": False, "mentionable": False}}}
        elif option.get("choices"):
            value = option["choices"][0]["value"]
        else:
            value = {3: "value", 4: option.get("min_value", 1), 5: True, 10: 1.0}[kind]
        values.append({"type": kind, "name": option["name"], "value": value})
    return values, resolved


def invocation(path: tuple[str, ...], options: list[dict]) -> list[dict[str, Any]]:
    """The interaction's options: the values themselves for a root command, else nested
    in their subcommand (and group)."""
    if not path:
        return options
    leaf = sub(path[-1], *options)
    return [group(path[0], leaf) if len(path) == 2 else leaf]


async def test_every_manager_command_refuses_members_without_manage_server(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    refused_in_server, refused_in_dm = {}, {}
    async with running_bot(fake, bot) as run:
        defined = code_manager_commands(bot)  # read while the cogs are loaded
        for root in manager_roots(fake):
            for path, subcommand in leaves(root):
                options, resolved = filled(fake, subcommand)
                name = " ".join((root["name"], *path))
                answer = await command(run, fake, root["name"], *invocation(path, options),
                                       permissions=NO_PERMISSIONS, resolved=resolved)
                refused_in_server[name] = (answer.type, answer.content, answer.ephemeral)
                in_dm = await command(run, fake, root["name"], *invocation(path, options), dm=True,
                                      resolved=resolved)
                refused_in_dm[name] = (in_dm.type, in_dm.content, in_dm.ephemeral)
        async with bot.sessions() as session:
            server = await repo.get_server_settings(session, int(fake.guild_id))
            fallbacks = await repo.list_fallbacks(session, int(fake.guild_id))
            keys = await session.scalar(select(func.count()).select_from(ServerApiKey))
    assert set(refused_in_server) == defined  # the walk really found the tree
    assert KNOWN_MANAGER_COMMANDS <= set(refused_in_server)
    assert not MEMBER_COMMANDS & set(refused_in_server)
    assert {name: reply for name, reply in refused_in_server.items() if reply != (4, REFUSED, True)} == {}
    assert {name: reply for name, reply in refused_in_dm.items() if reply != (4, GUILD_ONLY, True)} == {}
    assert (server.provider, server.verbatim_tool_calling_enabled, server.member_keys_required,
            server.thought_log_channel_id, fallbacks, keys) == (None, False, False, None, [], 0)


async def test_a_subgroup_is_gated_like_its_parent(fake_discord, bot_factory):
    """discord.py runs only the direct parent's interaction_check: `/model fallback ...`
    must be refused by its own group, and a manager still gets through."""
    fake = fake_discord
    async with running_bot(fake, bot_factory()) as run:
        member_view = await command(run, fake, "model", group("fallback", sub("list")),
                                    permissions=NO_PERMISSIONS, locale="ja")
        manager_view = await command(run, fake, "model", group("fallback", sub("list")))
    assert member_view.content == "このコマンドには「サーバー管理」権限が必要です。"
    assert manager_view.content == "No fallback models are configured."
