"""`/memory on|off|list|forget|clear` for every member, in servers and DMs, and
`/memory server add|list|remove` for managers (Manage Server, servers only).

Every reply is ephemeral and in the member's language. The member's commands act on the
memories that apply where they run: a server's, those saved there; a DM's, all of them
(each labelled with where it was saved). A server fact over FACT_LENGTH characters, or a
21st, is refused in one line; nothing is stored then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.capabilities.memory.storage import (
    MAX_MEMORIES,
    MAX_SERVER_FACTS,
    SavedMemory,
    add_server_fact,
    clear_memories,
    member_memories,
    memories_in,
    plain,
    remove_memory,
    remove_server_fact,
    server_facts_of,
    set_memory,
)
from bot.cogs.base import MAX_REPLY, ConfigCog, ManagerGroup, reply, send, text
from bot.db.models_memory import FACT_LENGTH
from bot.edge.translator import localized, named

if TYPE_CHECKING:
    from bot.app import LLMBot

Number = app_commands.Range[int, 1, MAX_MEMORIES]
FactNumber = app_commands.Range[int, 1, MAX_SERVER_FACTS]


def pages(lines: list[str], size: int = MAX_REPLY) -> list[str]:
    """The lines in as few replies as hold them (a line longer than a reply is cut)."""
    found: list[str] = []
    for line in lines:
        line = line[:size]
        if found and len(found[-1]) + 1 + len(line) <= size:
            found[-1] += "\n" + line
        else:
            found.append(line)
    return found


def shown(fact: str) -> str:
    """A stored fact as a reply shows it: on one line, unable to mention anyone."""
    return discord.utils.escape_mentions(" ".join(fact.split()))


def memory_line(interaction: discord.Interaction, number: int, memory: SavedMemory) -> str:
    where = ""
    if interaction.guild_id is None:  # a DM lists every memory: say where each was saved
        where = (text(interaction, "commands.memory.where_dm") if memory.guild_id is None
                 else text(interaction, "commands.memory.where_server", server=memory.guild_id))
    return text(interaction, "commands.memory.line", number=number, fact=shown(memory.fact),
                saved=f"<t:{int(memory.saved_at.timestamp())}:d>", where=where)


class MemoryCog(ConfigCog):
    memory = app_commands.Group(**named("commands.memory"))
    # A subgroup cannot carry default_permissions on Discord: the group's check is the gate.
    server = ManagerGroup(**named("commands.memory.server"), parent=memory)

    @localized(memory.command, "commands.memory.on")
    async def on(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_memory(session, interaction.user.id, True)
        await reply(interaction, "commands.memory.turned_on")

    @localized(memory.command, "commands.memory.off")
    async def off(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_memory(session, interaction.user.id, False)
            kept = len((await member_memories(session, interaction.user.id)).memories)
        await reply(interaction, "commands.memory.turned_off", count=kept)

    @localized(memory.command, "commands.memory.list")
    async def list_(self, interaction: discord.Interaction) -> None:
        user_id, guild_id = interaction.user.id, interaction.guild_id
        async with self.bot.sessions() as session:
            enabled = (await member_memories(session, user_id)).enabled
            listed = await memories_in(session, user_id, guild_id)
        header = text(interaction, "commands.memory.header_dm" if guild_id is None else "commands.memory.header_server")
        state = text(interaction, "commands.memory.state_on" if enabled else "commands.memory.state_off")
        lines = [memory_line(interaction, n, m) for n, m in enumerate(listed, 1)]
        if not lines:
            lines = [text(interaction, "commands.memory.empty")]
        for page in pages([f"{state} {header}", *lines]):
            await send(interaction, page)

    @localized(memory.command, "commands.memory.forget", params={"n": "memory_number"})
    async def forget(self, interaction: discord.Interaction, n: Number) -> None:
        async with self.bot.sessions() as session, session.begin():
            gone = await remove_memory(session, interaction.user.id, interaction.guild_id, n)
        if gone is None:
            await reply(interaction, "commands.memory.no_such", number=n)
            return
        await reply(interaction, "commands.memory.forgotten", fact=shown(gone.fact))

    @localized(memory.command, "commands.memory.clear")
    async def clear(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session, session.begin():
            count = await clear_memories(session, interaction.user.id, interaction.guild_id)
        key = "commands.memory.cleared_dm" if interaction.guild_id is None else "commands.memory.cleared_server"
        await reply(interaction, key, count=count)

    # ---- the server's facts (managers) -----------------------------------------------------

    @localized(server.command, "commands.memory.server.add", params={"written": "server_fact"})
    async def server_add(self, interaction: discord.Interaction, written: str) -> None:
        fact = " ".join(written.split())
        if plain(fact) != fact:
            await reply(interaction, "commands.error.control_characters")
            return
        if not fact or len(fact) > FACT_LENGTH:
            await reply(interaction, "commands.memory.fact_length", limit=FACT_LENGTH, length=len(fact))
            return
        assert interaction.guild_id is not None  # the group's check refused a DM
        async with self.bot.sessions() as session, session.begin():
            added = await add_server_fact(session, interaction.guild_id, fact, interaction.user.id)
        if not added:
            await reply(interaction, "commands.memory.facts_full", limit=MAX_SERVER_FACTS)
            return
        await reply(interaction, "commands.memory.fact_added", fact=shown(fact))

    @localized(server.command, "commands.memory.server.list")
    async def server_list(self, interaction: discord.Interaction) -> None:
        assert interaction.guild_id is not None
        async with self.bot.sessions() as session:
            facts = await server_facts_of(session, interaction.guild_id)
        if not facts:
            await reply(interaction, "commands.memory.no_facts")
            return
        lines = [text(interaction, "commands.memory.facts_header", count=len(facts), limit=MAX_SERVER_FACTS),
                 *(f"{n}. {shown(fact)}" for n, fact in enumerate(facts, 1))]
        for page in pages(lines):
            await send(interaction, page)

    @localized(server.command, "commands.memory.server.remove", params={"n": "server_fact_number"})
    async def server_remove(self, interaction: discord.Interaction, n: FactNumber) -> None:
        assert interaction.guild_id is not None
        async with self.bot.sessions() as session, session.begin():
            gone = await remove_server_fact(session, interaction.guild_id, n)
        if gone is None:
            await reply(interaction, "commands.memory.no_such_fact", number=n)
            return
        await reply(interaction, "commands.memory.fact_removed", fact=shown(gone))


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(MemoryCog(bot))
