"""Everything kept about one member, read for the export or erased, across `KEPT`.

The erasure is one transaction (the caller's): every section goes, or none does. It
bumps the member's configuration stamp (`bot.repo.versions`), so this process drops its
cached copy of their settings at commit and every other process at its next poll; their
next question sees no personal route.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.member_data import Exported, MemberData
from bot.capabilities.privacy.kept import KEPT
from bot.repo.versions import config_write


async def exported(session: AsyncSession, user_id: int,
                   kept: Sequence[MemberData] = KEPT) -> list[tuple[str, Exported]]:
    """Each section's rows, in `kept` order."""
    return [(data.name, await data.export(session, user_id)) for data in kept]


@config_write("member", "user_id")
async def erase_everything(session: AsyncSession, user_id: int,
                           kept: Sequence[MemberData] = KEPT) -> dict[str, int]:
    """Every section's `erase` in the caller's transaction; the rows each deleted."""
    return {data.name: await data.erase(session, user_id) for data in kept}
