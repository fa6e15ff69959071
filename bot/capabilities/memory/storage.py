"""Memory's storage: a member's switch and memories, a server's facts.

Every write that changes what an answer recalls stamps its scope (`config_write`): a
member's memories are kept in the configuration cache with the member's own settings
("member" stamp), a server's facts with the server's configuration ("server" stamp), so
every process drops its copy at the change. The member's switch and memories are read
together in one indexed statement (`member_memories`).

Where memories apply: a memory keeps the server it was saved in (None: a DM). In a
server the member's memories saved there are recalled, in a DM all of them
(`recalled_in`); list, forget and clear act on the same memories.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models_memory import FACT_LENGTH, Memory, MemoryOptIn, ServerFact
from bot.repo.common import insert_for, lock_server
from bot.repo.versions import config_write


def plain(fact: str) -> str:
    """The fact on one line, without control characters (a NUL no database stores, a
    line break that would open a section of the system prompt)."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in fact).split())


MAX_MEMORIES = 100  # per member: the oldest goes when a new one would be the 101st
MAX_SERVER_FACTS = 20  # per server: a manager is refused the 21st


@dataclass(frozen=True)
class SavedMemory:
    id: int
    guild_id: int | None  # None: saved in a DM
    fact: str
    saved_at: datetime


@dataclass(frozen=True)
class MemberMemories:
    """A member's switch and every memory kept, oldest first (what the cache keeps)."""

    enabled: bool = False
    memories: tuple[SavedMemory, ...] = ()

    def recalled_in(self, guild_id: int | None) -> tuple[SavedMemory, ...]:
        """The memories that apply where `guild_id` is (a DM, None: all of them)."""
        return self.memories if guild_id is None else tuple(m for m in self.memories if m.guild_id == guild_id)


NO_MEMORIES = MemberMemories()


@dataclass(frozen=True)
class Saved:
    """What saving a fact did: the fact as kept, whether it was cut, how many oldest went."""

    fact: str
    cut: bool
    dropped: int


async def member_memories(session: AsyncSession, user_id: int) -> MemberMemories:
    """The switch and the memories in one statement (the opt-in row joined to its memories)."""
    rows = (await session.execute(
        select(MemoryOptIn.enabled, Memory.id, Memory.guild_id, Memory.fact, Memory.saved_at)
        .outerjoin(Memory, Memory.user_id == MemoryOptIn.user_id)
        .where(MemoryOptIn.user_id == user_id).order_by(Memory.id))).all()
    if not rows:
        return NO_MEMORIES
    memories = tuple(SavedMemory(r.id, r.guild_id, r.fact, r.saved_at) for r in rows if r.id is not None)
    return MemberMemories(bool(rows[0].enabled), memories)



@config_write("member", "user_id")
async def set_memory(session: AsyncSession, user_id: int, enabled: bool) -> None:
    """Turn the member's memory on or off (off keeps what is saved)."""
    stmt = insert_for(session, MemoryOptIn).values(user_id=user_id, enabled=enabled)
    await session.execute(stmt.on_conflict_do_update(index_elements=["user_id"],
                                                     set_={"enabled": enabled, "changed_at": func.now()}))


@config_write("member", "user_id")
async def add_memory(session: AsyncSession, user_id: int, guild_id: int | None, fact: str) -> Saved:
    """Keep `fact` (cut to FACT_LENGTH), dropping the oldest beyond MAX_MEMORIES."""
    whole = plain(fact)
    kept = whole[:FACT_LENGTH]
    session.add(Memory(user_id=user_id, guild_id=guild_id, fact=kept))
    await session.flush()
    newest_beyond = await session.scalar(select(Memory.id).where(Memory.user_id == user_id)
                                         .order_by(Memory.id.desc()).offset(MAX_MEMORIES).limit(1))
    dropped = 0
    if newest_beyond is not None:
        result = await session.execute(delete(Memory).where(Memory.user_id == user_id, Memory.id <= newest_beyond))
        dropped = result.rowcount or 0
    return Saved(kept, len(whole) > FACT_LENGTH, dropped)


def _recalled(user_id: int, guild_id: int | None):
    where = [Memory.user_id == user_id]
    if guild_id is not None:
        where.append(Memory.guild_id == guild_id)
    return where


async def memories_in(session: AsyncSession, user_id: int, guild_id: int | None) -> list[SavedMemory]:
    """The memories that apply where `guild_id` is, oldest first (as `/memory list` numbers them)."""
    rows = await session.scalars(select(Memory).where(*_recalled(user_id, guild_id)).order_by(Memory.id))
    return [SavedMemory(m.id, m.guild_id, m.fact, m.saved_at) for m in rows]


@config_write("member", "user_id")
async def remove_memory(session: AsyncSession, user_id: int, guild_id: int | None, number: int) -> SavedMemory | None:
    """Delete the `number`th (from 1) of the memories that apply here; None when there is none."""
    listed = await memories_in(session, user_id, guild_id)
    if not 1 <= number <= len(listed):
        return None
    gone = listed[number - 1]
    await session.execute(delete(Memory).where(Memory.id == gone.id, Memory.user_id == user_id))
    return gone


@config_write("member", "user_id")
async def clear_memories(session: AsyncSession, user_id: int, guild_id: int | None) -> int:
    """Delete every memory that applies here; how many went."""
    result = await session.execute(delete(Memory).where(*_recalled(user_id, guild_id)))
    return result.rowcount or 0


@config_write("member", "user_id")
async def delete_member_memories(session: AsyncSession, user_id: int) -> int:
    """The member's switch and every memory, gone; the rows deleted."""
    memories = await session.execute(delete(Memory).where(Memory.user_id == user_id))
    switch = await session.execute(delete(MemoryOptIn).where(MemoryOptIn.user_id == user_id))
    return (memories.rowcount or 0) + (switch.rowcount or 0)


# ---- server facts ------------------------------------------------------------------------

async def server_facts_of(session: AsyncSession, guild_id: int) -> tuple[str, ...]:
    """The server's facts, oldest first (loaded with the server's configuration)."""
    return tuple((await session.scalars(select(ServerFact.fact).where(ServerFact.guild_id == guild_id)
                                        .order_by(ServerFact.id))).all())


@config_write("server", "guild_id")
async def add_server_fact(session: AsyncSession, guild_id: int, fact: str, added_by: int) -> bool:
    """Keep a server fact; False (nothing written) when the server has MAX_SERVER_FACTS.
    A fact over FACT_LENGTH is the caller's to refuse (ValueError here)."""
    if not fact or len(fact) > FACT_LENGTH or plain(fact) != fact:
        raise ValueError("a server fact is 1 to FACT_LENGTH characters on one line, without control characters")
    await lock_server(session, guild_id)
    count = await session.scalar(select(func.count()).select_from(ServerFact).where(ServerFact.guild_id == guild_id))
    if (count or 0) >= MAX_SERVER_FACTS:
        return False
    session.add(ServerFact(guild_id=guild_id, fact=fact, added_by=added_by))
    await session.flush()
    return True


@config_write("server", "guild_id")
async def remove_server_fact(session: AsyncSession, guild_id: int, number: int) -> str | None:
    """Delete the server's `number`th fact (from 1); its text, or None when there is none."""
    rows = (await session.execute(select(ServerFact.id, ServerFact.fact).where(ServerFact.guild_id == guild_id)
                                  .order_by(ServerFact.id))).all()
    if not 1 <= number <= len(rows):
        return None
    fact_id, fact = rows[number - 1]
    await session.execute(delete(ServerFact).where(ServerFact.id == fact_id))
    return fact
