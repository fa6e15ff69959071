"""What memory keeps about a member, for `/privacy export` and `/privacy erase`: the
switch and every memory, in every server and DM (`bot.capabilities.member_data`)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.member_data import Exported, MemberData, id_text
from bot.capabilities.memory.storage import delete_member_memories, member_memories
from bot.db.models_memory import MemoryOptIn


class MemoryData(MemberData):
    """The member's memory switch (first) and memories, oldest first."""

    name = "memories"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        switch = await session.scalar(select(MemoryOptIn).where(MemoryOptIn.user_id == user_id))
        if switch is None:
            return []
        kept = await member_memories(session, user_id)
        return [{"memory": "on" if switch.enabled else "off", "changed_at": switch.changed_at.isoformat()},
                *({"fact": m.fact, "server_id": id_text(m.guild_id), "saved_at": m.saved_at.isoformat()}
                  for m in kept.memories)]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Both gone, and the member's stamp bumped (every process drops its copy)."""
        return await delete_member_memories(session, user_id)
