"""The operator's MCP servers, kept connected for the process (one `ServerLink` each).

Read from the `MCP_SERVERS` file at start-up (the settings checked it already: a
malformed file stopped start-up in one line) and again on `/tools reload`, which
leaves every server and connects to the file's servers anew; a file that became
malformed is refused and the servers connected stay as they were.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.capabilities.mcp_tools.link import Listed, ServerLink
from bot.capabilities.mcp_tools.servers_file import ServersFileError, ServerSpec, read_servers

log = logging.getLogger(__name__)

Switches = Mapping[tuple[str, str], bool]  # (server, tool or "" for the whole server) -> on


def switched_on(switches: Switches, server: str, tool: str) -> bool:
    """On unless a manager turned the server or the tool off (the operator's servers are
    offered everywhere by default)."""
    return switches.get((server, ""), True) and switches.get((server, tool), True)


@dataclass(frozen=True)
class Offered:
    link: ServerLink
    tool: Listed


class McpHub:
    """The servers the file at `path` names (None: no MCP servers, nothing started)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.links: dict[str, ServerLink] = {}

    async def start(self) -> None:
        """Connect to the file's servers; a file broken since the settings read it (one
        line) leaves the bot without MCP tools until `/tools reload`."""
        if self.path is None:
            return
        try:
            self._connect(read_servers(self.path))
        except ServersFileError as exc:
            log.error("MCP_SERVERS not used: %s", exc)

    async def reload(self) -> int:
        """Read the file again and connect to its servers; how many. ServersFileError
        (nothing changed) when the file cannot be used."""
        if self.path is None:
            return 0
        specs = read_servers(self.path)
        await self.close()
        self._connect(specs)
        return len(specs)

    async def close(self) -> None:
        links, self.links = list(self.links.values()), {}
        await asyncio.gather(*(link.close() for link in links))

    def offered(self, switches: Switches) -> list[Offered]:
        """The tools of the servers up now that this server's managers left on."""
        return [Offered(link, tool) for link in self.links.values() if link.up
                for tool in link.tools if switched_on(switches, link.spec.name, tool.name)]

    def _connect(self, specs: tuple[ServerSpec, ...]) -> None:
        self.links = {spec.name: ServerLink(spec) for spec in specs}
        for link in self.links.values():
            link.start()
