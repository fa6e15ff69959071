"""`/memory` through the fake Discord: the member's commands in a server and a DM (each
acting on the memories that apply there, every reply ephemeral and localized), and
`/memory server add|list|remove` for managers only, whose facts go into every member's
request after the persona."""

from __future__ import annotations

from bot.capabilities.memory.recall import FACTS_HEADER
from bot.capabilities.memory.storage import (
    MAX_SERVER_FACTS,
    add_memory,
    add_server_fact,
    server_facts_of,
)
from bot.db.models_memory import FACT_LENGTH
from bot.repo.controls import set_persona
from providers.i18n import t
from tests.capabilities.memory.asking_the_bot import ask, operator_bot, system_of
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import NO_PERMISSIONS, command, discord_text, group, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

OTHER_SERVER = 777


def numbered(reply: str) -> list[str]:
    """The facts of a list reply, in its order (the date and place after them left out)."""
    return [line.split(". ", 1)[1].split(" — ")[0] for line in reply.split("\n")[1:]]


async def test_the_members_commands_act_on_what_applies_where_they_run(fake_discord: FakeDiscord, bot_factory):
    fake, bot = fake_discord, bot_factory()
    alice, guild = int(fake.member_user["id"]), int(fake.guild_id)
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "memory", sub("list"))
        assert before.ephemeral and before.content == "\n".join([
            f"{t('commands.memory.state_off', 'en')} {t('commands.memory.header_server', 'en')}",
            t("commands.memory.empty", "en")])
        await command(run, fake, "memory", sub("on"))
        async with bot.sessions() as session, session.begin():
            for where, fact in ((guild, "here one"), (OTHER_SERVER, "elsewhere"), (None, "in a dm"),
                                (guild, "here two")):
                await add_memory(session, alice, where, fact)

        here = await command(run, fake, "memory", sub("list"))
        assert here.ephemeral and here.content.startswith("Memory is on. Your memories saved in this server")
        assert numbered(here.content) == ["here one", "here two"]
        assert "<t:" in here.content and " in server " not in here.content
        everywhere = await command(run, fake, "memory", sub("list"), dm=True)
        assert everywhere.content.startswith("Memory is on. All your memories, recalled in DMs")
        assert numbered(everywhere.content) == ["here one", "elsewhere", "in a dm", "here two"]
        lines = everywhere.content.split("\n")[1:]
        assert lines[1].endswith(f" in server {OTHER_SERVER}") and lines[2].endswith(" in a DM")

        missing = await command(run, fake, "memory", sub("forget", opt("n", 3)))
        assert missing.content == discord_text(fake, "commands.memory.no_such", number=3)
        assert "There is no memory number 3 here" in missing.content
        forgot = await command(run, fake, "memory", sub("forget", opt("n", 2)))
        assert (forgot.content, forgot.ephemeral) == ("Forgotten: here two", True)
        cleared = await command(run, fake, "memory", sub("clear"))
        assert cleared.content == "Memories saved in this server deleted: 1."

        off = await command(run, fake, "memory", sub("off"), dm=True)
        assert off.content == discord_text(fake, "commands.memory.turned_off", count=2)
        assert off.content.startswith("Memory is off: I save and recall nothing.") and off.content.endswith(": 2.")
        ja = await command(run, fake, "memory", sub("list"), dm=True, locale="ja")
        assert ja.content.startswith(t("commands.memory.state_off", "ja"))
        assert numbered(ja.content) == ["elsewhere", "in a dm"]
        all_gone = await command(run, fake, "memory", sub("clear"), dm=True)
        assert all_gone.content == "Deleted all your memories: 2."
    assert fake.rate_limited == []


async def test_server_facts_are_for_managers_and_go_after_the_persona(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("We open at nine."))
    bot = operator_bot(turn_bot, server)
    guild = int(fake.guild_id)
    refused = t("commands.error.manage_server_required", "en")
    async with running_bot(fake, bot) as run:
        member = await command(run, fake, "memory", group_add("Members cannot add this"), permissions=NO_PERMISSIONS)
        assert (member.content, member.ephemeral) == (refused, True)
        listed = await command(run, fake, "memory", facts("list"), permissions=NO_PERMISSIONS)
        assert listed.content == refused
        in_dm = await command(run, fake, "memory", group_add("In a DM"), dm=True)
        assert in_dm.content == t("commands.error.guild_only", "en")
        too_long = await command(run, fake, "memory", group_add("x" * (FACT_LENGTH + 1)))
        assert too_long.content == (f"A server fact is 1 to {FACT_LENGTH} characters (this one is "
                                    f"{FACT_LENGTH + 1}). Nothing was stored.")
        bell = await command(run, fake, "memory", group_add("ring \x07 the bell"))
        assert bell.content == t("commands.error.control_characters", "en")
        async with bot.sessions() as session:
            assert await server_facts_of(session, guild) == ()

        async with bot.sessions() as session, session.begin():
            await set_persona(session, guild, None, "You are the shop's assistant.")
        added = await command(run, fake, "memory", group_add("The shop opens at 9:00, @everyone"))
        assert added.content == "Added for every member's requests in this server: The shop opens at 9:00, @\u200beveryone"
        await ask(run, fake, "when do you open?", 1)
        system = system_of(server.requests[0].json)
        assert system.index("You are the shop's assistant.") < system.index(f"{FACTS_HEADER}\n- The shop opens at 9:00")

        shown = await command(run, fake, "memory", facts("list"))
        assert shown.content.split("\n")[1:] == ["1. The shop opens at 9:00, @\u200beveryone"]
        gone = await command(run, fake, "memory", facts("remove", opt("n", 2)))
        assert gone.content == discord_text(fake, "commands.memory.no_such_fact", number=2)
        removed = await command(run, fake, "memory", facts("remove", opt("n", 1)))
        assert removed.content.startswith("Removed: The shop opens")
        assert (await command(run, fake, "memory", facts("list"))).content == discord_text(fake, "commands.memory.no_facts")

        async with bot.sessions() as session, session.begin():
            for n in range(MAX_SERVER_FACTS):
                await add_server_fact(session, guild, f"fact {n}", 1)
        full = await command(run, fake, "memory", group_add("one more"))
        assert full.content.startswith(f"This server has {MAX_SERVER_FACTS} facts already")
    assert fake.rate_limited == []


def facts(name: str, *options):
    """`/memory server <name>`."""
    return group("server", sub(name, *options))


def group_add(fact: str):
    return facts("add", opt("text", fact))
