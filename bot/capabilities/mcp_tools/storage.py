"""The switches a server's managers set on the operator's MCP servers and their tools.

Loaded with the server's configuration (`ServerConfig.mcp_switches`, one statement) and
written through `config_write` ("server" stamp), so every process drops its copy at the
change. A server or tool without a row is on.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.mcp_tools.hub import Switches
from bot.db.models_mcp_tools import McpToolSwitch
from bot.repo.common import insert_for, lock_server
from bot.repo.versions import config_write


async def switches_of(session: AsyncSession, guild_id: int) -> Switches:
    """(server, tool or "") -> on, for every switch the server's managers set."""
    rows = await session.execute(select(McpToolSwitch.mcp_server, McpToolSwitch.tool, McpToolSwitch.enabled)
                                 .where(McpToolSwitch.guild_id == guild_id))
    return {(server, tool): enabled for server, tool, enabled in rows.all()}


@config_write("server", "guild_id")
async def set_switch(session: AsyncSession, guild_id: int, server: str, tool: str, enabled: bool) -> None:
    """Turn an MCP server (`tool` "") or one of its tools on or off here."""
    await lock_server(session, guild_id)
    stmt = insert_for(session, McpToolSwitch).values(guild_id=guild_id, mcp_server=server, tool=tool,
                                                    enabled=enabled)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id", "mcp_server", "tool"],
                                                     set_={"enabled": enabled}))
