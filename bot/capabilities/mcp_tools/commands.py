"""`/tools list|enable|disable|reload`: the operator's MCP servers, per Discord server.

`list`, `enable` and `disable` are the server's managers' (Manage Server): each MCP server,
or one tool of it, on or off here (stored per server, `storage.py`). `reload` reads the
`MCP_SERVERS` file again and reconnects every MCP server for the whole bot: the file is
the operator's, so reloading is the operator's act — the bot's owner (the application's
owner or team, as Discord names them), and only where they manage the server they run
it in (the group's gate). No command sets a server's command, URL or headers: those are
only in the operator's file. Every reply is ephemeral, in the member's language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.capabilities.mcp_tools.approval import shown_name as shown
from bot.capabilities.mcp_tools.hub import McpHub, switched_on
from bot.capabilities.mcp_tools.servers_file import ServersFileError
from bot.capabilities.mcp_tools.storage import set_switch, switches_of
from bot.cogs.base import MANAGE_SERVER, ConfigCog, ManagerGroup, reply, send, text
from bot.db.models_mcp_tools import SERVER_NAME_LENGTH, TOOL_NAME_LENGTH
from bot.edge.translator import localized, named
from providers.log_safe import loggable

if TYPE_CHECKING:
    from bot.app import LLMBot

ServerName = app_commands.Range[str, 1, SERVER_NAME_LENGTH]
ToolName = app_commands.Range[str, 1, TOOL_NAME_LENGTH]
MAX_LIST = 1_900
# (one tool?, on?) -> the reply (literal keys, so the catalog check sees them).
SWITCHED = {(False, True): "commands.tools.server_enabled", (False, False): "commands.tools.server_disabled",
            (True, True): "commands.tools.tool_enabled", (True, False): "commands.tools.tool_disabled"}


class ToolsCog(ConfigCog):
    """The commands, and the hub's life: connected when the cog loads, left when it unloads."""

    tools = ManagerGroup(**named("commands.tools"), guild_only=True, default_permissions=MANAGE_SERVER)

    def __init__(self, bot: LLMBot, hub: McpHub) -> None:
        super().__init__(bot)
        self.hub = hub

    async def cog_load(self) -> None:
        await self.hub.start()

    async def cog_unload(self) -> None:
        await self.hub.close()

    @localized(tools.command, "commands.tools.list")
    async def list_(self, interaction: discord.Interaction) -> None:
        if not self.hub.links:
            await reply(interaction, "commands.tools.none")
            return
        assert interaction.guild_id is not None  # the group is guild-only
        async with self.bot.sessions() as session:
            switches = await switches_of(session, interaction.guild_id)
        lines: list[str] = []
        for name, link in self.hub.links.items():
            state = "commands.tools.server_up" if link.up else "commands.tools.server_down"
            on = "commands.tools.on" if switched_on(switches, name, "") else "commands.tools.off"
            lines.append(text(interaction, state, server=shown(name), state=text(interaction, on)))
            for tool in link.tools:
                kind = "commands.tools.read_only" if tool.read_only else "commands.tools.asks"
                on = "commands.tools.on" if switches.get((name, tool.name), True) else "commands.tools.off"
                lines.append(text(interaction, "commands.tools.tool_line", tool=shown(tool.name),
                                  kind=text(interaction, kind), state=text(interaction, on)))
        body = "\n".join(lines)
        await send(interaction, body if len(body) <= MAX_LIST else body[:MAX_LIST] + "\n…")

    @localized(tools.command, "commands.tools.enable", params={"server": "mcp_server", "tool": "mcp_tool"})
    async def enable(self, interaction: discord.Interaction, server: ServerName, tool: ToolName | None = None) -> None:
        await self._switch(interaction, server, tool, True)

    @localized(tools.command, "commands.tools.disable", params={"server": "mcp_server", "tool": "mcp_tool"})
    async def disable(self, interaction: discord.Interaction, server: ServerName, tool: ToolName | None = None) -> None:
        await self._switch(interaction, server, tool, False)

    @localized(tools.command, "commands.tools.reload")
    async def reload(self, interaction: discord.Interaction) -> None:
        if not await self.bot.is_owner(interaction.user):
            await reply(interaction, "commands.error.tools_owner_only")
            return
        if self.hub.path is None:
            await reply(interaction, "commands.tools.none")
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            count = await self.hub.reload()
        except ServersFileError as exc:  # the operator's own file, shown to the operator
            await send(interaction, text(interaction, "commands.error.tools_file", problem=loggable(str(exc), 300)))
            return
        await reply(interaction, "commands.tools.reloaded", count=count)

    async def _switch(self, interaction: discord.Interaction, server: str, tool: str | None, on: bool) -> None:
        link = self.hub.links.get(server)
        if link is None:
            await reply(interaction, "commands.error.tools_no_server", server=shown(server))
            return
        if tool is not None and all(listed.name != tool for listed in link.tools):
            await reply(interaction, "commands.error.tools_no_tool", server=shown(server), tool=shown(tool))
            return
        assert interaction.guild_id is not None  # the group is guild-only
        async with self.bot.sessions() as session, session.begin():
            await set_switch(session, interaction.guild_id, server, tool or "", on)
        await reply(interaction, SWITCHED[tool is not None, on], server=shown(server), tool=shown(tool or ""))
