"""The operator's setting of the MCP tools capability, a mixin `bot.settings.Settings`
inherits: `MCP_SERVERS`, the path of the servers file (`servers_file.py`). The file is
read and checked when the settings load, so a malformed one stops start-up in one line
naming the setting, the file and the problem; it is read again on `/tools reload`."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, field_validator

from bot.capabilities.mcp_tools.servers_file import read_servers


class McpEnvironment(BaseModel):
    # The JSON file naming the MCP servers whose tools the model is offered (the common
    # `mcpServers` form). Unset: no MCP servers, the `mcp` SDK never imported.
    MCP_SERVERS: Path | None = None

    @field_validator("MCP_SERVERS")
    @classmethod
    def _usable_file(cls, path: Path | None) -> Path | None:
        if path is not None:
            read_servers(path)  # ServersFileError is a ValueError: the one line names the file and the problem
        return path
