"""Streamed tool calls of the chat-completions format, put together piece by piece.

A call arrives over many deltas: its `index` says which call a piece belongs to, the
first piece usually brings its `id` and name, and its JSON arguments come as string
fragments. Pure: the pieces are kept until the stream finishes the calls
(`providers/openai_compat/normalize.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class PartialCall:
    """One tool call so far: its id, and the fragments of its name and arguments."""

    id: str | None = None
    name: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)


def accumulate_calls(calls: dict[int, PartialCall], tool_calls: Any) -> None:
    """Add one delta's `tool_calls` to the calls by index; raise ValueError on a shape
    that is not the documented one (the caller reports a malformed stream)."""
    if not isinstance(tool_calls, list):
        raise ValueError("tool_calls is not a list")
    for position, item in enumerate(tool_calls):
        if not isinstance(item, dict):
            raise ValueError("tool call is not an object")
        index = item.get("index", position)
        if not isinstance(index, int) or isinstance(index, bool):
            raise ValueError("tool call index is not an integer")
        partial = calls.get(index)
        if partial is None:
            partial = calls[index] = PartialCall()
        if isinstance(item.get("id"), str) and item["id"]:
            partial.id = item["id"]
        function = item.get("function")
        if function is None:
            continue
        if not isinstance(function, dict):
            raise ValueError("tool call function is not an object")
        name, arguments = function.get("name"), function.get("arguments")
        if name is not None:
            if not isinstance(name, str):
                raise ValueError("tool call name is not a string")
            partial.name.append(name)
        if arguments is not None:
            if not isinstance(arguments, str):
                raise ValueError("tool call arguments are not a string")
            partial.arguments.append(arguments)
