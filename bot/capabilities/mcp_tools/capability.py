"""The MCP servers' tools in an answer: the `tools` seam, and `wait` only to keep the
answer's interrupt for the approval prompt (see the package docstring)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bot.capabilities.mcp_tools.hub import McpHub
from bot.capabilities.mcp_tools.tool import server_tool
from bot.question.context import Question
from bot.question.seams import AnswerPart, Joining
from bot.tools import ToolLoop
from stream.interrupt import Interrupt


class McpTools:
    """Joins every answer while the operator named MCP servers."""

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub

    def join(self, joining: Joining) -> AnswerPart | None:
        if not self.hub.links:
            return None
        return McpPart(self.hub, joining.question)


@dataclass
class McpPart(AnswerPart):
    hub: McpHub
    question: Question
    interrupt: Interrupt | None = None  # the answer's: a stopped answer asks no more

    async def wait(self, interrupt: Interrupt) -> bool:
        """Keeps the answer's interrupt, so an approval awaited ends with the answer."""
        self.interrupt = interrupt
        return True

    def tools(self, loop: ToolLoop) -> ToolLoop:
        """The tools of the servers up now that this server's managers left on, beside the
        built-in ones (a DM: every tool of the servers up)."""
        server = self.question.config.server
        offered = self.hub.offered(server.mcp_switches if server is not None else {})
        if not offered:
            return loop
        tools = [server_tool(o, self.question.locale, self.interrupt) for o in offered]
        return dataclasses.replace(loop, registry=loop.registry.adding(*tools))
