"""A server's tool as the model sees it, bound to one answer.

Named `<server>__<tool>` (`names.py`), described as the server describes it plus whether
the asker approves each call; its arguments held to the server's schema (`arguments.py`).
A tool the server marks read-only (`readOnlyHint`) runs at once; any other asks the asker
first (`approval.py`) and runs only when allowed: a denial, no answer in time or no asker
to ask is the tool's error, so the model reads that it was refused. The call is bounded
by CALL_SECONDS; its result reaches the model framed as untrusted data (`framing.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.capabilities.mcp_tools import approval
from bot.capabilities.mcp_tools.arguments import ServerArguments
from bot.capabilities.mcp_tools.framing import framed_result
from bot.capabilities.mcp_tools.hub import Offered
from bot.capabilities.mcp_tools.link import Unavailable
from bot.capabilities.mcp_tools.names import tool_name
from bot.tools.registry import Tool, ToolContext, ToolError
from providers.types import ToolSpec
from stream.interrupt import Interrupt

CALL_SECONDS = 30.0
MARGIN = 5.0  # the loop's bound stays above the tool's own (approval, then the call)
REFUSED = {
    "denied": "The asker denied this call: the tool was not run. Do not call it again for this request.",
    "expired": "The asker did not allow this call in time: the tool was not run.",
    "stopped": "The answer was stopped while the asker's approval was awaited: the tool was not run.",
    "unasked": "This tool needs the asker's approval, which could not be asked here: it was not run.",
}


@dataclass(frozen=True)
class ServerTool(Tool):
    """A Tool whose parameters are the server's own JSON Schema (flattened once, when the
    server listed it), not a pydantic model's."""

    parameters: Mapping[str, Any] = field(default_factory=dict)

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


def server_tool(offered: Offered, locale: str | None, stop: Interrupt | None = None) -> ServerTool:
    """`offered` as a tool of the answer asked in `locale` (its approval prompt's language)
    and stopped by `stop` (an approval awaited ends with it)."""
    link, listed = offered.link, offered.tool
    server = link.spec.name

    async def run(args: ServerArguments, context: ToolContext) -> Any:
        if not listed.read_only:
            decision = await approval.ask_asker(context, locale, server, listed.name, args.values,
                                                approval.APPROVAL_SECONDS, stop)
            if decision != "allowed":
                raise ToolError(REFUSED[decision])
        return framed_result(server, listed.name, await _called(offered, args.values))

    how = "read-only, runs at once" if listed.read_only else "each call waits for the asker's approval"
    description = f"{listed.description} (tool {listed.name} of the MCP server {server}; {how})".strip()
    seconds = CALL_SECONDS + MARGIN + (0 if listed.read_only else approval.APPROVAL_SECONDS)
    return ServerTool(tool_name(server, listed.name), description, listed.arguments, run,
                      timeout=seconds, parameters=listed.parameters)


async def _called(offered: Offered, values: dict[str, Any]) -> Any:
    """The server's result; every failure a ToolError the model reads (no secrets in it)."""
    from mcp.shared.exceptions import MCPError

    server = offered.link.spec.name
    try:
        return await offered.link.call(offered.tool.name, values, CALL_SECONDS)
    except Unavailable:
        raise ToolError(f"The MCP server {server} is unavailable right now: the tool did not run.") from None
    except TimeoutError:
        raise ToolError(f"The MCP server {server} did not answer within {CALL_SECONDS:g}s.") from None
    except MCPError as exc:
        raise ToolError(f"The MCP server {server} refused the call: {exc.error.message[:300]}") from None
