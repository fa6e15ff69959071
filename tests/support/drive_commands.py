"""Driving the configuration commands through the fake Discord as a member would.

Every call dispatches a real INTERACTION_CREATE (type 2 slash command or type 5 modal
submit) to a real discord.py client and returns the reply the bot sent back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.edge.command_names import named_commands, rendered
from providers.i18n import t
from tests.support.drive_discord_client import RunningBot
from tests.support.fake_discord_server import FakeDiscord, snowflake

MANAGE_SERVER = str(1 << 5)
NO_PERMISSIONS = "0"
EPHEMERAL = 64


@dataclass
class CommandReply:
    """What the bot answered one interaction with."""

    type: int                 # 4 message, 5 deferred, 8 autocomplete, 9 modal
    content: str              # the (final) message text; "" for a modal
    ephemeral: bool
    data: dict[str, Any]      # the callback's data (the modal form for type 9)


def sub(name: str, *options: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "name": name, "options": list(options)}


def group(name: str, *subcommands: dict[str, Any]) -> dict[str, Any]:
    return {"type": 2, "name": name, "options": list(subcommands)}


def opt(name: str, value: Any) -> dict[str, Any]:
    kind = 5 if isinstance(value, bool) else 4 if isinstance(value, int) else 10 if isinstance(value, float) else 3
    return {"type": kind, "name": name, "value": value}


def mention(fake: FakeDiscord, path: str) -> str:
    """How the bot names `/path` on Discord: a mention of the id the fake gave its root."""
    root = next(c for cmds in fake.commands.values() for c in cmds if c["name"] == path.split(" ")[0])
    return f"</{path}:{root['id']}>"


def discord_text(fake: FakeDiscord, key: str, locale: str = "en", **params: Any) -> str:
    """A catalog entry as the bot shows it on Discord: its commands as mentions of the ids
    the fake gave them when the bot synced."""
    synced = fake.commands.get("global", [])
    names = named_commands(synced, {c["name"]: int(c["id"]) for c in synced})
    return rendered(t(key, locale, **params), locale, names)


def member(fake: FakeDiscord, name: str) -> dict[str, Any]:
    return {"id": snowflake(), "username": name, "discriminator": "0", "global_name": name.title(),
            "avatar": None, "bot": False}


async def _answer(run: RunningBot, fake: FakeDiscord, token: str) -> CommandReply:
    def answered() -> bool:
        for response in fake.interaction_responses:
            if response["token"] != token:
                continue
            if response.get("type") != 5:
                return True
            return any(m.webhook_token == token and m.content for m in fake.messages.values())
        return False

    await run.wait_for(answered)
    response = next(r for r in fake.interaction_responses if r["token"] == token)
    data = response.get("data") or {}
    if response["type"] == 4:
        return CommandReply(4, data.get("content", ""), bool(data.get("flags", 0) & EPHEMERAL), data)
    if response["type"] in (8, 9):  # autocomplete choices, modal form
        return CommandReply(response["type"], "", True, data)
    followups = [r for r in fake.requests if r.method == "POST" and r.path.startswith("/webhooks/")
                 and token in r.path]
    text = [m.content for m in fake.messages.values() if m.webhook_token == token and m.content][-1]
    ephemeral = bool(data.get("flags", 0) & EPHEMERAL) and all(
        (r.body or {}).get("flags", 0) & EPHEMERAL for r in followups)
    return CommandReply(5, text, ephemeral, data)


def _payload(fake: FakeDiscord, itype: int, data: dict[str, Any], *, permissions: str,
             user: dict[str, Any] | None, locale: str, dm: bool) -> dict[str, Any]:
    """An INTERACTION_CREATE like fake.send_interaction's, plus DMs and resolved data."""
    user = user or fake.member_user
    payload: dict[str, Any] = {
        "id": snowflake(), "application_id": fake.application_id, "type": itype,
        "token": f"itoken-{snowflake()}", "version": 1, "data": data,
        "attachment_size_limit": 10 * 1024 * 1024, "locale": locale, "entitlements": [],
        "app_permissions": "2248473465835073",
    }
    if dm:
        payload.update(channel_id=fake.dm_channel_id, user=user, context=1,
                       channel={"id": fake.dm_channel_id, "type": 1, "recipients": [user]},
                       authorizing_integration_owners={"1": user["id"]})
    else:
        payload.update(
            guild_id=fake.guild_id, channel_id=fake.channel_id, guild_locale="en-US", context=0,
            member={"user": user, "roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False,
                    "mute": False, "flags": 0, "permissions": permissions},
            authorizing_integration_owners={"0": fake.guild_id})
    return payload


async def autocomplete(run: RunningBot, fake: FakeDiscord, name: str, *options: dict[str, Any],
                       permissions: str = MANAGE_SERVER) -> list[dict[str, Any]]:
    """An autocomplete INTERACTION_CREATE (type 4); one option must carry "focused": True."""
    cmd = next(c for cmds in fake.commands.values() for c in cmds if c["name"] == name)
    data = {"id": cmd["id"], "name": name, "type": 1, "options": list(options)}
    payload = _payload(fake, 4, data, permissions=permissions, user=None, locale="en-US", dm=False)
    await fake.dispatch("INTERACTION_CREATE", payload)
    return (await _answer(run, fake, payload["token"])).data["choices"]


async def command(run: RunningBot, fake: FakeDiscord, name: str, *options: dict[str, Any],
                  permissions: str = MANAGE_SERVER, user: dict[str, Any] | None = None,
                  locale: str = "en-US", resolved: dict[str, Any] | None = None,
                  dm: bool = False) -> CommandReply:
    """Invoke `/name ...options` and wait for the bot's answer."""
    if resolved is None and not dm:
        payload = await fake.send_interaction(name=name, options=list(options), permissions=permissions,
                                              user=user, locale=locale)
        return await _answer(run, fake, payload["token"])
    # send_interaction has no `resolved` (channel options) and no DM form.
    cmd = next(c for cmds in fake.commands.values() for c in cmds if c["name"] == name)
    data = {"id": cmd["id"], "name": name, "type": 1, "options": list(options)}
    if resolved is not None:
        data["resolved"] = resolved
    payload = _payload(fake, 2, data, permissions=permissions, user=user, locale=locale, dm=dm)
    await fake.dispatch("INTERACTION_CREATE", payload)
    return await _answer(run, fake, payload["token"])


def modal_fields(form: CommandReply) -> tuple[str, list[str]]:
    """The modal's custom_id and its text inputs' custom_ids, however they are nested."""
    inputs: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == 4 and "custom_id" in node:
                inputs.append(node["custom_id"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(form.data.get("components", []))
    return form.data["custom_id"], inputs


async def submit_modal(run: RunningBot, fake: FakeDiscord, form: CommandReply, value: str, *,
                       permissions: str = MANAGE_SERVER, user: dict[str, Any] | None = None,
                       locale: str = "en-US", dm: bool = False) -> CommandReply:
    """Type `value` into the form's only field and submit it (INTERACTION_CREATE type 5)."""
    custom_id, inputs = modal_fields(form)
    assert len(inputs) == 1, form.data
    if not dm:
        payload = await fake.send_interaction(modal_custom_id=custom_id, modal_values={inputs[0]: value},
                                              permissions=permissions, user=user, locale=locale)
        return await _answer(run, fake, payload["token"])
    rows = [{"type": 1, "components": [{"type": 4, "custom_id": inputs[0], "value": value}]}]
    payload = _payload(fake, 5, {"custom_id": custom_id, "components": rows}, permissions=permissions,
                       user=user, locale=locale, dm=True)
    await fake.dispatch("INTERACTION_CREATE", payload)
    return await _answer(run, fake, payload["token"])
