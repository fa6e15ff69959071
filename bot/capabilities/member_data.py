"""What a capability keeps about one member, for `/privacy export` and `/privacy erase`.

A capability that stores rows about a member (memories, reminders, personal settings,
usage, counters, keys) gives one `MemberData`; the privacy commands ask each of them, so
the export holds everything the bot keeps about the member and the erasure leaves none
of it. `export` returns plain JSON values and never a secret: a key shows only its last
four characters. `erase` deletes in the caller's transaction (one commit for all of
them) and says how many rows went. A capability's class subclasses `MemberData`, so
what it does not say takes the default here: data the member's erasure removes.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

Exported = list[dict[str, Any]]  # one JSON object per row kept


class MemberData(Protocol):
    name: str  # the export file's section for this data, e.g. "memories"
    # Exported but left by an erasure: what a server's managers set about the member (a
    # block), which the member must not be able to lift.
    kept_on_erase: bool = False

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        """Everything of this kind kept about the member, oldest first."""

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Delete it all; the rows deleted."""


def id_text(value: int | None) -> str | None:
    """A Discord id as the export writes it: a string, since JSON readers round integers
    past 2**53."""
    return None if value is None else str(value)
