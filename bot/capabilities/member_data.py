"""What a capability keeps about one member, for `/privacy export` and `/privacy erase`.

A capability that stores rows about a member (memories, reminders, personal settings,
usage, counters, keys) gives one `MemberData`; the privacy commands ask each of them, so
the export holds everything the bot keeps about the member and the erasure leaves none
of it. `export` returns plain JSON values and never a secret: a key shows only its last
four characters. `erase` deletes in the caller's transaction (one commit for all of
them) and says how many rows went.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

Exported = list[dict[str, Any]]  # one JSON object per row kept


class MemberData(Protocol):
    name: str  # the export file's section for this data, e.g. "memories"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        """Everything of this kind kept about the member, oldest first."""

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Delete it all; the rows deleted."""
