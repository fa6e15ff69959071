"""The MCP tools capability's table (`bot.capabilities.mcp_tools`): what a server's
managers turned off or on again, per MCP server or per tool of one."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import Base

SERVER_NAME_LENGTH = 24  # bot/capabilities/mcp_tools/servers_file.py's names
TOOL_NAME_LENGTH = 128


class McpToolSwitch(Base):
    """One switch: an MCP server (`tool` empty) or one of its tools, on or off in a server."""

    __tablename__ = "mcp_tool_switches"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    mcp_server: Mapped[str] = mapped_column(String(SERVER_NAME_LENGTH), primary_key=True)
    tool: Mapped[str] = mapped_column(String(TOOL_NAME_LENGTH), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean)
