"""The tool registry: name -> argument model + coroutine, and the specs sent to providers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from bot.capabilities.web_search.service.log import SearchLog
from bot.tools.schema import tool_parameters
from providers.types import ToolSpec


@dataclass(frozen=True)
class ToolContext:
    """What a tool may touch: the channel the question was asked in, nothing else, and
    only as far as the asking member may (a tool never lends the bot's permissions)."""

    channel: Any = None  # a discord.py messageable (None outside Discord)
    asker: Any = None  # the discord.py Member (or User in DMs) who asked
    # The answer's record of its web searches (queries, sources, failures), which the
    # `web_search` tool adds to and the turn reads afterwards; None: nothing is recorded.
    search_log: SearchLog | None = None
    # Asked before each web search: within the answer's bound and the member's daily
    # limit (the search is counted when it answers True); None: no bound.
    may_search: Callable[[], Awaitable[bool]] | None = None


class ToolError(Exception):
    """A failure the model should read (bad zone, bad notation); never holds secrets."""


@dataclass(frozen=True)
class Tool:
    """One built-in tool; `run` gets validated arguments and the turn's context."""

    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any, ToolContext], Awaitable[Any]]

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description,
                        parameters=tool_parameters(self.arguments))


class ToolRegistry:
    """An ordered set of tools with unique names."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool
        self._specs = [tool.spec() for tool in self._tools.values()]  # built once, sent every turn

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)
