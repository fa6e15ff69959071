"""The settings capabilities declare, stored as one JSON object per server and capability.

Every declared setting lives here (`bot.capabilities.declared`): a new one needs no
column, migration or module of its own. A write checks each value against its
declaration first and merges it into the stored object in one statement (JSONB `||` on
PostgreSQL, `json_patch` on SQLite), so two managers changing two settings of one
capability at once both keep theirs; it bumps the server's stamp like every settings
write. A read checks the stored values again: one unknown or out of bounds (written by
an older or newer bot) reads as its default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.declared import (
    ServerValues,
    SettingsDeclaration,
    Value,
    Values,
    server_values,
)
from bot.db.models import CapabilitySettings
from bot.repo.common import ensure_server, insert_for
from bot.repo.versions import config_write


async def read_server_values(session: AsyncSession, declarations: Iterable[SettingsDeclaration],
                             guild_id: int | None) -> ServerValues:
    """Every declared setting of the server in one query (a DM: every default)."""
    if guild_id is None:
        return server_values(declarations)
    rows = await session.execute(select(CapabilitySettings.capability, CapabilitySettings.settings)
                                 .where(CapabilitySettings.guild_id == guild_id))
    return server_values(declarations, {capability: stored for capability, stored in rows})


async def read_values(session: AsyncSession, declaration: SettingsDeclaration, guild_id: int | None) -> Values:
    """One capability's settings of the server (a DM: the defaults)."""
    row = None if guild_id is None else await session.get(CapabilitySettings, (guild_id, declaration.capability),
                                                            populate_existing=True)
    return declaration.read(row.settings if row is not None else None)


@config_write("server", "guild_id")
async def set_values(session: AsyncSession, guild_id: int, declaration: SettingsDeclaration,
                     changes: Mapping[str, Value]) -> Values:
    """Store `changes` (setting name -> value), the capability's other settings kept; the
    capability's settings as stored now. A value the declaration does not take raises
    OutOfBounds before anything is stored."""
    checked = {name: declaration.setting(name).checked(value) for name, value in changes.items()}
    await ensure_server(session, guild_id)
    stmt = insert_for(session, CapabilitySettings).values(guild_id=guild_id, capability=declaration.capability,
                                                          settings=checked)
    merged = (CapabilitySettings.settings.op("||")(stmt.excluded.settings)
              if session.get_bind().dialect.name == "postgresql"
              else func.json_patch(CapabilitySettings.settings, stmt.excluded.settings))
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id", "capability"],
                                                     set_={"settings": merged}))
    return await read_values(session, declaration, guild_id)
