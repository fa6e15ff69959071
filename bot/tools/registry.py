"""The tool registry: name -> argument model + coroutine, and the specs sent to providers."""

from __future__ import annotations

import copy
import functools
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from bot.tools.schema import tool_parameters
from providers.types import ToolSpec


@dataclass(frozen=True)
class ToolContext:
    """What a tool may touch: the channel the question was asked in, nothing else, and
    only as far as the asking member may (a tool never lends the bot's permissions)."""

    channel: Any = None  # a discord.py messageable (None outside Discord)
    asker: Any = None  # the discord.py Member (or User in DMs) who asked
    interaction: Any = None  # the slash command that asked, if one did: it can answer the asker alone


class ToolError(Exception):
    """A failure the model should read (bad zone, bad notation); never holds secrets."""


@functools.lru_cache(maxsize=256)
def _spec(name: str, description: str, arguments: type[BaseModel]) -> ToolSpec:
    """A tool's spec, built once: a capability binds the same tool to every answer it
    joins, and its JSON schema costs about 0.13 ms to build."""
    return ToolSpec(name=name, description=description, parameters=tool_parameters(arguments))


@dataclass(frozen=True)
class Tool:
    """One built-in tool; `run` gets validated arguments and the turn's context. `timeout`:
    its own bound when it may wait longer than the loop's (an asker's approval)."""

    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any, ToolContext], Awaitable[Any]]
    timeout: float | None = None

    def spec(self) -> ToolSpec:
        return _spec(self.name, self.description, self.arguments)


class ToolRegistry:
    """An ordered set of tools with unique names."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool
        self._specs = [tool.spec() for tool in self._tools.values()]  # built once, sent every turn

    def rebound(self, name: str, run: Callable[[Any, ToolContext], Awaitable[Any]]) -> ToolRegistry:
        """The same tools, with `name` run by `run` for one answer (a capability binds its
        tool to the answer's own state); the specs are shared, not built again."""
        bound = copy.copy(self)  # the same specs list, a tools dict of its own
        bound._tools = {**self._tools, name: replace(self._tools[name], run=run)}
        return bound

    def adding(self, *tools: Tool) -> ToolRegistry:
        """These tools and `tools`, for one answer (a capability offers a tool only to the
        answers it joins); the specs already built are shared, only the new ones are built."""
        added = copy.copy(self)
        added._tools = dict(self._tools)
        for tool in tools:
            if tool.name in added._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            added._tools[tool.name] = tool
        added._specs = [*self._specs, *(tool.spec() for tool in tools)]
        return added

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)
