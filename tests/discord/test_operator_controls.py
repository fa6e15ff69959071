"""A server manager's controls, end to end: the real LLMBot against the fake Discord and the
replay provider. Personas reach the provider as the system prompt; channel rules, access
rules and the DM switch decide whether a mention reaches the provider at all."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.db.models import AccessRule, ChannelMode, ChannelRule, Persona
from bot.repo.usage import OPERATOR_BUCKET, take_message
from providers.i18n import t
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import NO_PERMISSIONS, command, opt, sub, submit_modal
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.fake_discord_server import FakeDiscord, snowflake
from tests.support.fake_provider_server import ProviderReplayServer

MANAGE_GUILD = 1 << 5
ANSWER = "Answered."


class ControlsDiscord(FakeDiscord):
    """The fake Discord plus what these tests need: roles members hold, a thread under the
    main channel, one more channel, and a category holding a channel with a thread."""

    def __init__(self) -> None:
        super().__init__()
        self.other_channel_id = snowflake()
        self.thread_id = snowflake()
        self.category_id, self.filed_channel_id, self.filed_thread_id = snowflake(), snowflake(), snowflake()
        self.roles = {name: snowflake() for name in ("mods", "muted", "members")}
        self.member_roles: dict[str, list[str]] = {}
        self.manager = {"id": snowflake(), "username": "mona", "discriminator": "0", "global_name": "Mona",
                        "avatar": None, "bot": False}

    def role_payload(self, name: str) -> dict[str, Any]:
        permissions = str(MANAGE_GUILD) if name == "mods" else "0"
        return {"id": self.roles[name], "name": name, "permissions": permissions, "position": 1, "color": 0,
                "hoist": False, "managed": False, "mentionable": True}

    def guild_payload(self) -> dict[str, Any]:
        payload = super().guild_payload()
        payload["roles"] += [self.role_payload(name) for name in self.roles]
        payload["channels"].append(self._channel(self.other_channel_id, "other", 2))
        payload["channels"].append({**self._channel(self.category_id, "projects", 3), "type": 4})
        payload["channels"].append({**self._channel(self.filed_channel_id, "in-projects", 4),
                                    "parent_id": self.category_id})
        payload["threads"] = [self._thread(self.thread_id, self.channel_id),
                              self._thread(self.filed_thread_id, self.filed_channel_id)]
        payload["members"].append(self._member(self.manager) | {"user": self.manager})
        return payload

    def _thread(self, thread_id: str, parent_id: str) -> dict[str, Any]:
        return {"id": thread_id, "guild_id": self.guild_id, "parent_id": parent_id, "name": "a-thread",
                "type": 11, "owner_id": self.member_user["id"], "last_message_id": None, "rate_limit_per_user": 0,
                "message_count": 0, "member_count": 1,
                "thread_metadata": {"archived": False, "auto_archive_duration": 1440, "locked": False,
                                    "archive_timestamp": datetime.now(UTC).isoformat()}}

    def _member(self, user: dict[str, Any], permissions: str | None = None) -> dict[str, Any]:
        member = super()._member(user, permissions)
        member["roles"] = list(self.member_roles.get(user["id"], []))
        return member


@pytest.fixture
async def fake() -> AsyncIterator[ControlsDiscord]:
    async with ControlsDiscord() as server:
        server.member_roles[server.manager["id"]] = [server.roles["mods"], server.roles["muted"]]
        yield server


@pytest.fixture
def make_bot(tmp_path, provider_server: ProviderReplayServer):
    make = llmbot_factory(tmp_path)
    provider_server.reply(openai_stream(ANSWER, piece=20))

    def build(**env: Any):
        # A chat-completions endpoint: these tests read the turns as that API sends them.
        return make(**{"ALLOW_PRIVATE_ENDPOINTS": "true", "DEFAULT_TEXT_PROVIDER": "custom",
                       "DEFAULT_TEXT_MODEL": "gpt-fake", "DEFAULT_TEXT_BASE_URL": f"{provider_server.url}/v1",
                       "DEFAULT_TEXT_API_KEYS": "sk-controls", **env})

    return build


# ---- driving ------------------------------------------------------------------------------

async def ask(fake: FakeDiscord, text: str = "hello", *, channel: str | None = None,
              author: dict[str, Any] | None = None, dm: bool = False):
    content = text if dm else f"<@{fake.bot_user['id']}> {text}"
    return await fake.send_user_message(content, channel_id=channel, author=author, dm=dm, mention_bot=not dm)


def replies_to(fake: FakeDiscord, question) -> list[str]:
    return [m.content for m in fake.bot_messages(question.channel_id)
            if (m.message_reference or {}).get("message_id") == question.id and not m.deleted]


async def answered(run, fake: FakeDiscord, question) -> None:
    await run.wait_for(lambda: ANSWER in replies_to(fake, question))


async def settle(run, fake: FakeDiscord, provider_server: ProviderReplayServer) -> None:
    """Prove a negative: a later question is answered, and messages before it had time too."""
    requests = len(provider_server.requests)
    await answered(run, fake, await ask(fake, "control question", author=fake.manager))
    assert len(provider_server.requests) == requests + 1
    await asyncio.sleep(0.3)


def system_of(provider_server: ProviderReplayServer, index: int = -1) -> str:
    first = provider_server.requests[index].json["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def channel_option(channel_id: str, kind: int = 0) -> tuple[dict, dict]:
    resolved = {"channels": {channel_id: {"id": channel_id, "type": kind, "name": "c", "permissions": "0"}}}
    return {"type": 7, "name": "channel", "value": channel_id}, resolved


def role_option(fake: ControlsDiscord, name: str, option: str = "role") -> tuple[dict, dict]:
    role = fake.role_payload(name)
    return {"type": 8, "name": option, "value": role["id"]}, {"roles": {role["id"]: role}}


def member_option(fake: FakeDiscord, user: dict[str, Any]) -> tuple[dict, dict]:
    resolved = {"users": {user["id"]: user},
                "members": {user["id"]: {"roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "flags": 0,
                                         "permissions": "0"}}}
    return {"type": 9, "name": "target", "value": user["id"]}, resolved


async def manage(run, fake: FakeDiscord, root: str, leaf: str, option: tuple[dict, dict] | None = None,
                 **kwargs: Any):
    """`/root leaf [option]` as a manager; the reply."""
    options, resolved = ([option[0]], option[1]) if option is not None else ([], None)
    return await command(run, fake, root, sub(leaf, *options), resolved=resolved, **kwargs)


async def write_persona(run, fake: FakeDiscord, body: str, scope: str | None = None, **kwargs: Any):
    """Open `/persona set` and submit `body`; (the form as opened, the reply)."""
    options = [opt("scope", scope)] if scope else []
    form = await command(run, fake, "persona", sub("set", *options), **kwargs)
    assert form.type == 9, form
    return form, await submit_modal(run, fake, form, body, **kwargs)


def prefilled(form) -> str | None:
    [row] = form.data["components"]
    return row["components"][0].get("value")


# ---- persona -------------------------------------------------------------------------------

PERSONA = ("You are {bot} of {server}, in #{channel}, talking with {user} on {date} at {time}. "
           "Kept as typed: {unknown} {0} {bot.__class__} {{bot}} { } {")


async def test_persona_and_channel_persona_reach_the_system_prompt(fake, make_bot, provider_server):
    async with running_bot(fake, make_bot()) as run:
        await answered(run, fake, await ask(fake))
        default = system_of(provider_server)
        form, saved = await write_persona(run, fake, PERSONA)
        await answered(run, fake, await ask(fake))
        server_prompt = system_of(provider_server)
        channel_form, _ = await write_persona(run, fake, "Channel voice for {user} in #{channel}.", "channel")
        await answered(run, fake, await ask(fake, channel=fake.channel_id))
        in_channel = system_of(provider_server)
        await answered(run, fake, await ask(fake, channel=fake.thread_id))
        in_thread = system_of(provider_server)
        await answered(run, fake, await ask(fake, channel=fake.other_channel_id))
        elsewhere = system_of(provider_server)
        again, _ = await write_persona(run, fake, PERSONA + " Edited.")
        shown = await command(run, fake, "persona", sub("show"))
        cleared = await command(run, fake, "persona", sub("clear", opt("scope", "channel")))
        await answered(run, fake, await ask(fake, channel=fake.thread_id))
        after_clear = system_of(provider_server)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert default == f"You are LLM Bot, a helpful assistant chatting on Discord in the server Fake Guild. Today is {today}."
    assert prefilled(form) is None and saved.ephemeral
    assert saved.content == t("commands.persona.saved", "en", scope="this server", length=len(PERSONA))
    assert re.fullmatch(
        rf"You are LLM Bot of Fake Guild, in #general, talking with Alice on {today} at \d\d:\d\d UTC\. "
        r"Kept as typed: \{unknown\} \{0\} \{bot\.__class__\} \{LLM Bot\} \{ \} \{", server_prompt), server_prompt
    assert prefilled(channel_form) is None
    assert in_channel == "Channel voice for Alice in #general."
    assert in_thread == "Channel voice for Alice in #a-thread."  # the parent's persona, the thread's name
    assert elsewhere.startswith("You are LLM Bot of Fake Guild, in #other, talking with Alice")
    assert prefilled(again) == PERSONA
    assert shown.content == f"Persona for this server:\n{PERSONA} Edited." and shown.ephemeral
    assert cleared.content == f"The persona for <#{fake.channel_id}> was removed."
    assert after_clear.startswith("You are LLM Bot of Fake Guild, in #a-thread") and after_clear.endswith("Edited.")


async def test_bad_personas_are_refused_and_nothing_is_stored(fake, make_bot):
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        _, too_long = await write_persona(run, fake, "x" * 4001)
        _, bell = await write_persona(run, fake, "Be nice.\x07")
        _, blank = await write_persona(run, fake, "  \n ")
        _, japanese = await write_persona(run, fake, "x" * 4001, locale="ja")
        _, fine = await write_persona(run, fake, "Line one.\n\tLine two.")
        async with bot.sessions() as session:
            stored = list(await session.scalars(select(Persona.body)))
    assert too_long.content == "A persona may be at most 4000 characters; this one has 4001. Nothing was stored."
    assert bell.content == t("commands.error.persona_control_characters", "en")
    assert blank.content == t("commands.error.persona_empty", "en")
    assert japanese.content == t("commands.error.persona_too_long", "ja", limit=4000, length=4001)
    assert all(r.ephemeral for r in (too_long, bell, blank, japanese, fine))
    assert stored == ["Line one.\n\tLine two."]


async def test_a_persona_form_submitted_by_someone_who_lost_manage_server_is_refused(fake, make_bot):
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        form = await command(run, fake, "persona", sub("set"))
        refused = await submit_modal(run, fake, form, "Sneaky.", permissions=NO_PERMISSIONS)
        async with bot.sessions() as session:
            count = await session.scalar(select(func.count()).select_from(Persona))
    assert refused.content == t("commands.error.manage_server_required", "en")
    assert count == 0


# ---- where ---------------------------------------------------------------------------------

async def test_allowlist_answers_only_allowed_channels_and_their_threads(fake, make_bot, provider_server):
    async with running_bot(fake, make_bot()) as run:
        mode = await manage(run, fake, "channels", "mode", (opt("mode", "allowlist"), None))
        allowed = await manage(run, fake, "channels", "allow", channel_option(fake.channel_id))
        ignored = await ask(fake, channel=fake.other_channel_id)
        in_thread = await ask(fake, channel=fake.thread_id)
        await answered(run, fake, in_thread)
        await settle(run, fake, provider_server)
        listing = await manage(run, fake, "channels", "list")
    assert mode.content == t("commands.channels.mode_allowlist", "en") and mode.ephemeral
    assert allowed.content == f"<#{fake.channel_id}> is allowed."
    assert fake.bot_messages(fake.other_channel_id) == []
    assert [c for c, _ in fake.typing if c == fake.other_channel_id] == []
    assert len(provider_server.requests) == 2  # the thread's question and the control question
    assert ignored.id not in {(m.message_reference or {}).get("message_id") for m in fake.bot_messages()}
    assert listing.content.splitlines()[:3] == [t("commands.channels.mode_allowlist", "en"),
                                                f"Allowed channels: <#{fake.channel_id}>", "Denied channels: -"]
    assert listing.content.splitlines()[3] == "Listen channels: -"


async def test_a_category_covers_its_channels_and_their_threads(fake, make_bot, provider_server):
    """Before, `/channels allow` took a category, confirmed it, and matched no channel under it."""
    async with running_bot(fake, make_bot()) as run:
        await manage(run, fake, "channels", "mode", (opt("mode", "allowlist"), None))
        await manage(run, fake, "channels", "allow", channel_option(fake.channel_id))  # where settle asks
        allowed = await manage(run, fake, "channels", "allow", channel_option(fake.category_id, kind=4))
        in_channel = await ask(fake, "filed question", channel=fake.filed_channel_id)
        await answered(run, fake, in_channel)
        in_thread = await ask(fake, "filed thread question", channel=fake.filed_thread_id)
        await answered(run, fake, in_thread)
        await ask(fake, channel=fake.other_channel_id)  # outside the category: still not allowed
        await settle(run, fake, provider_server)
        denied = await manage(run, fake, "channels", "deny", channel_option(fake.category_id, kind=4), locale="ja")
        await ask(fake, "after the deny", channel=fake.filed_thread_id)
        await settle(run, fake, provider_server)
    assert allowed.content == (f"<#{fake.category_id}> is allowed, with every channel in this category "
                               "and their threads.")
    assert denied.content.startswith(f"カテゴリー <#{fake.category_id}> を拒否しました")
    asked = [r.json["messages"][-1]["content"] for r in provider_server.requests]
    assert asked == ["filed question", "filed thread question", "control question", "control question"]
    assert fake.bot_messages(fake.other_channel_id) == []


async def test_a_denied_channel_is_never_answered_not_even_for_a_manager(fake, make_bot, provider_server):
    async with running_bot(fake, make_bot()) as run:
        denied = await manage(run, fake, "channels", "deny", channel_option(fake.other_channel_id))
        await ask(fake, channel=fake.other_channel_id)
        await ask(fake, "manager asking", channel=fake.other_channel_id, author=fake.manager)
        await settle(run, fake, provider_server)
    assert denied.content == f"<#{fake.other_channel_id}> is denied: the bot never answers there."
    assert fake.bot_messages(fake.other_channel_id) == []
    assert [c for c, _ in fake.typing if c == fake.other_channel_id] == []
    assert len(provider_server.requests) == 1  # the control question only


# ---- for whom ------------------------------------------------------------------------------

async def test_a_blocked_member_hears_it_once_an_hour_and_never_reaches_the_provider(fake, make_bot, provider_server):
    async with running_bot(fake, make_bot()) as run:
        blocked = await manage(run, fake, "access", "block", member_option(fake, fake.member_user))
        first = await ask(fake)
        await run.wait_for(lambda: replies_to(fake, first))
        second = await ask(fake, "again")
        await settle(run, fake, provider_server)
        unblocked = await manage(run, fake, "access", "unblock", member_option(fake, fake.member_user))
        await answered(run, fake, await ask(fake, "now?"))
    assert blocked.content == f"<@{fake.member_user['id']}> is blocked from chatting with the bot."
    assert replies_to(fake, first) == [t("chat.access_blocked", "en")]
    assert replies_to(fake, second) == []
    assert unblocked.content == f"<@{fake.member_user['id']}> is unblocked."
    assert [r.json["messages"][-1]["content"] for r in provider_server.requests] == ["control question", "now?"]


async def test_a_blocked_role_refuses_its_members_but_never_a_manager(fake, make_bot, provider_server):
    fake.member_roles[fake.member_user["id"]] = [fake.roles["muted"]]
    async with running_bot(fake, make_bot()) as run:
        await manage(run, fake, "access", "block", role_option(fake, "muted", "target"))
        refused = await ask(fake)
        await run.wait_for(lambda: replies_to(fake, refused))
        await settle(run, fake, provider_server)  # the manager holds the muted role too
        listing = await manage(run, fake, "access", "list")
    assert replies_to(fake, refused) == [t("chat.access_blocked", "en")]
    assert len(provider_server.requests) == 1
    assert listing.content.splitlines() == ["Blocked members: -", f"Blocked roles: <@&{fake.roles['muted']}>",
                                            "Required roles: -"]


async def test_required_roles_admit_only_their_holders(fake, make_bot, provider_server):
    holder = {**fake.member_user, "id": snowflake(), "username": "hana", "global_name": "Hana"}
    fake.member_roles[holder["id"]] = [fake.roles["members"]]
    async with running_bot(fake, make_bot()) as run:
        required = await manage(run, fake, "access", "require-role", role_option(fake, "members"))
        refused = await ask(fake, "without the role")
        await run.wait_for(lambda: replies_to(fake, refused))
        await answered(run, fake, await ask(fake, "with the role", author=holder))
        await ask(fake, "still without")
        await settle(run, fake, provider_server)
        unrequired = await manage(run, fake, "access", "unrequire-role", role_option(fake, "members"))
        await answered(run, fake, await ask(fake, "anyone now"))
    assert required.content.startswith(f"<@&{fake.roles['members']}> is now a required role")
    assert replies_to(fake, refused) == [t("chat.access_role_required", "en")]
    assert len([m for m in fake.bot_messages() if m.content == t("chat.access_role_required", "en")]) == 1
    assert unrequired.content == f"<@&{fake.roles['members']}> is no longer required."
    asked = [r.json["messages"][-1]["content"] for r in provider_server.requests]
    assert asked == ["with the role", "control question", "anyone now"]


# ---- DMs -----------------------------------------------------------------------------------

async def test_dms_off_gets_one_line_and_no_request(fake, make_bot, provider_server):
    async with running_bot(fake, make_bot(ALLOW_DMS="false")) as run:
        question = await ask(fake, "in private", dm=True)
        await run.wait_for(lambda: replies_to(fake, question))
        await settle(run, fake, provider_server)
    assert replies_to(fake, question) == ["This bot answers in servers only."]
    assert [r.json["messages"][-1]["content"] for r in provider_server.requests] == ["control question"]


async def test_the_operators_default_has_its_own_limit_in_dms(fake, make_bot, provider_server):
    """DMs spend the operator's keys: DEFAULT_MESSAGES_PER_HOUR bounds each member there
    (before, five DMs got five answers with no limit at all), said once an hour."""
    async with running_bot(fake, make_bot(DEFAULT_MESSAGES_PER_HOUR="1")) as run:
        questions = []
        for number in range(5):
            questions.append(await ask(fake, f"private {number}", dm=True))
            await run.wait_for(lambda q=questions[0]: ANSWER in replies_to(fake, q))
            await asyncio.sleep(0.3)
        await settle(run, fake, provider_server)
    asked = [r.json["messages"][-1]["content"] for r in provider_server.requests]
    assert asked == ["private 0", "control question"]
    refusals = [line for q in questions[1:] for line in replies_to(fake, q)]
    assert len(refusals) == 1 and refusals[0].startswith("You have reached this bot's limit of 1 messages per hour")


async def test_dms_on_the_operators_keys_are_bounded_without_any_setting(fake, make_bot, provider_server):
    """Unset, DEFAULT_MESSAGES_PER_HOUR is 30 per member: the 31st DM of the hour is
    refused (before, an operator who set nothing paid for every stranger's DMs); 0 lifts it."""
    async with running_bot(fake, make_bot()) as run:
        hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        async with run.bot.sessions() as session, session.begin():
            for _ in range(30):
                assert await take_message(session, OPERATOR_BUCKET, int(fake.member_user["id"]), hour, 30)
        refused = await ask(fake, "one more", dm=True)
        await run.wait_for(lambda: replies_to(fake, refused))
        await settle(run, fake, provider_server)
    assert replies_to(fake, refused)[0].startswith("You have reached this bot's limit of 30 messages per hour")
    assert "one more" not in [r.json["messages"][-1]["content"] for r in provider_server.requests]


async def test_no_prefix_commands_help_is_a_question_or_nothing(fake, make_bot, provider_server):
    """`@bot help` is a question like any other where the bot answers, and nothing at all
    where it must stay silent (discord.py's built-in help answered even there)."""
    async with running_bot(fake, make_bot()) as run:
        await manage(run, fake, "channels", "deny", channel_option(fake.other_channel_id))
        await ask(fake, "help", channel=fake.other_channel_id)
        here = await ask(fake, "help")
        await answered(run, fake, here)
        await settle(run, fake, provider_server)
    assert fake.bot_messages(fake.other_channel_id) == []
    assert [r.json["messages"][-1]["content"] for r in provider_server.requests] == ["help", "control question"]


# ---- the gate and /status -----------------------------------------------------------------

async def test_non_managers_change_nothing_and_status_shows_the_controls(fake, make_bot):
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        member = {"permissions": NO_PERMISSIONS}
        refusals = [
            await manage(run, fake, "channels", "mode", (opt("mode", "allowlist"), None), **member),
            await manage(run, fake, "channels", "deny", channel_option(fake.channel_id), **member),
            await manage(run, fake, "access", "block", member_option(fake, fake.owner), **member),
            await manage(run, fake, "access", "require-role", role_option(fake, "members"), **member),
            await command(run, fake, "persona", sub("clear"), **member),
        ]
        async with bot.sessions() as session:
            rows = [await session.scalar(select(func.count()).select_from(model))
                    for model in (Persona, ChannelMode, ChannelRule, AccessRule)]
        await write_persona(run, fake, "Hi.")
        await manage(run, fake, "channels", "allow", channel_option(fake.channel_id))
        await manage(run, fake, "channels", "deny", channel_option(fake.other_channel_id))
        await manage(run, fake, "access", "require-role", role_option(fake, "members"))
        status = await command(run, fake, "status")
        member_status = await command(run, fake, "status", permissions=NO_PERMISSIONS)
    assert {(r.content, r.ephemeral) for r in refusals} == {(t("commands.error.manage_server_required", "en"), True)}
    assert rows == [0, 0, 0, 0]
    lines = status.content.splitlines()
    for line in ("Persona: set for this server (0 channel persona(s)).", t("commands.channels.mode_everywhere", "en"),
                 "Channel rules: 1 allowed, 1 denied.", "Blocked members: -", "Blocked roles: -",
                 f"Required roles: <@&{fake.roles['members']}>"):
        assert line in lines, status.content
    assert "Channel rules" not in member_status.content


async def test_manager_commands_answer_in_japanese(fake, make_bot):
    async with running_bot(fake, make_bot()) as run:
        mode = await manage(run, fake, "channels", "mode", (opt("mode", "allowlist"), None), locale="ja")
        none = await command(run, fake, "persona", sub("show"), locale="ja")
    assert mode.content == "チャンネルモード: 許可したチャンネル（とその中のスレッド）のみ。"
    assert none.content == "このサーバーにはペルソナが設定されていません。組み込みの既定が使われます。"
