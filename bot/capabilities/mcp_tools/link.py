"""One MCP server kept connected: started, listed, watched, restarted with backoff.

A `ServerLink` owns its connection in one task (the SDK's transports are anyio context
managers, entered and left in the same task): connect, `initialize`, list the tools,
then ping every PING_SECONDS. A server that exits, fails to answer a ping within
PING_TIMEOUT or breaks a call is left (the SDK stops the process) and started again
after a delay that doubles from FIRST_DELAY to MAX_DELAY; meanwhile `up` is False and
its tools are not offered. One warning when an outage begins and one line when the
server is back: never one per call or per retry. Nothing a server writes on stderr
reaches the bot's log (it could forge log lines): it goes to the null device.

The `mcp` SDK is imported here, inside the task, so a bot without MCP servers never
loads it (`tests/test_idle_imports.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from bot.capabilities.mcp_tools.servers_file import ServerSpec
from bot.tools.schema import flat_schema
from providers.log_safe import loggable

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0
PING_SECONDS = 15.0
PING_TIMEOUT = 10.0
FIRST_DELAY = 1.0
MAX_DELAY = 60.0
MAX_TOOLS = 64  # per server: a tool list is sent with every request
MAX_DESCRIPTION = 1_000


class Unavailable(Exception):
    """The server is not connected now (down, restarting, or reloading)."""


@dataclass(frozen=True)
class Listed:
    """A tool as the server listed it, with what every answer offering it needs built once:
    its parameters as providers take them, and the model its arguments are checked with."""

    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool
    arguments: type[Any]  # arguments.ServerArguments held to the tool's schema


class ServerLink:
    """One configured server's connection (see the module docstring)."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.tools: tuple[Listed, ...] = ()
        self._session: Any = None  # mcp.ClientSession while up
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._broken = asyncio.Event()
        self._delay = FIRST_DELAY
        self._outage = False
        self.connected = asyncio.Event()  # set while up (tests and /tools list wait on it)

    @property
    def up(self) -> bool:
        return self._session is not None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._keep(), name=f"mcp-{self.spec.name}")

    async def close(self) -> None:
        """Leave the server (its process stopped); waits a bounded time."""
        self._stop.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), CONNECT_TIMEOUT)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """The server's `CallToolResult`; Unavailable when it is down, TimeoutError past
        `timeout` (either way the link checks the server at once)."""
        session = self._session
        if session is None:
            raise Unavailable(self.spec.name)
        try:
            return await asyncio.wait_for(session.call_tool(tool, arguments), timeout)
        except TimeoutError:
            self._broken.set()  # a hung server fails its next ping and is restarted
            raise
        except Exception as exc:
            if _closed(exc):
                self._broken.set()
                raise Unavailable(self.spec.name) from None
            raise

    async def _keep(self) -> None:
        while not self._stop.is_set():
            try:
                await self._serve()
            except Exception as exc:  # noqa: BLE001 - any failure of the server is an outage, not the bot's
                self._went_down(exc)
            if self._stop.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self._delay)
            self._delay = min(self._delay * 2, MAX_DELAY)

    async def _serve(self) -> None:
        from mcp import ClientSession

        async with _transport(self.spec) as (read, write), ClientSession(read, write) as session:
            await asyncio.wait_for(session.initialize(), CONNECT_TIMEOUT)
            listed = await asyncio.wait_for(_listing(session), CONNECT_TIMEOUT)
            self.tools = usable_tools(self.spec.name, listed)
            self._came_up(session)
            try:
                await self._watch(session)
            finally:
                self._session = None
                self.connected.clear()

    def _came_up(self, session: Any) -> None:
        self._session, self._delay = session, FIRST_DELAY
        self._broken.clear()
        self.connected.set()
        if self._outage:
            log.warning("MCP server %s is back with %d tools", self.spec.name, len(self.tools))
        else:
            log.info("MCP server %s connected with %d tools", self.spec.name, len(self.tools))
        self._outage = False

    async def _watch(self, session: Any) -> None:
        """Until stopped: ping on a timer or at once when a call found the server broken."""
        while not self._stop.is_set():
            stop, broken = asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(self._broken.wait())
            try:
                await asyncio.wait({stop, broken}, timeout=PING_SECONDS, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
                broken.cancel()
            if self._stop.is_set():
                return
            self._broken.clear()
            await asyncio.wait_for(session.send_ping(), PING_TIMEOUT)

    def _went_down(self, exc: BaseException) -> None:
        self._session = None
        self.connected.clear()
        if self._stop.is_set() or self._outage:
            log.debug("MCP server %s still unavailable (%s)", self.spec.name, type(exc).__name__)
            return
        self._outage = True
        log.warning("MCP server %s is unavailable (%s): its tools are not offered until it is back; "
                    "retrying with backoff", self.spec.name, _reason(exc))


@asynccontextmanager
async def _transport(spec: ServerSpec) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio or streamable-HTTP streams for `spec` (headers sent, never logged)."""
    if spec.command is not None:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env) or None,
                                       cwd=spec.cwd)
        with open(os.devnull, "w") as quiet:  # noqa: PTH123 - a text file object is what the SDK takes
            async with stdio_client(params, errlog=quiet) as streams:
                yield streams[0], streams[1]
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    assert spec.url is not None  # servers_file.py: a server without command has a url
    async with create_mcp_http_client(headers=dict(spec.headers)) as client, \
            streamable_http_client(spec.url, http_client=client) as streams:
        yield streams[0], streams[1]


async def _listing(session: Any) -> list[Any]:
    """Every page of the server's tool list, until past MAX_TOOLS."""
    from mcp.types import PaginatedRequestParams

    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor or len(tools) > MAX_TOOLS:
            return tools


def usable_tools(server: str, listed: Any) -> tuple[Listed, ...]:
    """The tools the bot can offer: a usable input schema, at most MAX_TOOLS."""
    from bot.capabilities.mcp_tools.arguments import arguments_for, usable_schema

    kept: list[Listed] = []
    for tool in listed:
        if any(k.name == tool.name for k in kept):
            continue  # a server listing a name twice: the first one is the tool
        if not usable_schema(tool.input_schema):
            log.warning("MCP server %s: tool %s left out (its input schema is not a valid object schema)",
                        server, loggable(tool.name[:64]))
            continue
        read_only = bool(tool.annotations is not None and tool.annotations.read_only_hint)
        kept.append(Listed(tool.name, (tool.description or "")[:MAX_DESCRIPTION], flat_schema(tool.input_schema),
                           read_only, arguments_for(tool.input_schema)))
    if len(kept) > MAX_TOOLS:
        log.warning("MCP server %s lists %d tools: only the first %d are offered", server, len(kept), MAX_TOOLS)
    return tuple(kept[:MAX_TOOLS])


def _closed(exc: BaseException) -> bool:
    """Whether `exc` says the connection is gone (the SDK's MCPError CONNECTION_CLOSED)."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _reason(exc: BaseException) -> str:
    """A failure in a few words for the log: its type, and the first of a group's."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        return _reason(inner[0])
    return type(exc).__name__
