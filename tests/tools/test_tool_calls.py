"""Running one call: every failure is a model-visible JSON error, never an exception."""

from __future__ import annotations

import asyncio
import json
import logging

from pydantic import BaseModel

from bot.tools import Tool, ToolContext, ToolRegistry, default_registry, execute_calls
from bot.tools.loop import execute_call, history_for
from providers.types import FunctionCall


def error_of(content: str) -> dict:
    return json.loads(content)["error"]


class NoArgs(BaseModel):
    pass


async def _hang(args: NoArgs, context: ToolContext) -> None:
    await asyncio.Event().wait()


async def _boom(args: NoArgs, context: ToolContext) -> None:
    raise RuntimeError("internal detail sk-should-not-leak")


async def test_validation_errors_are_model_visible() -> None:
    out = await execute_call(FunctionCall("roll_dice", {"sides": 6}, id="c1"), default_registry(), ToolContext())
    assert not out.ok
    error = error_of(out.content)
    assert error["type"] == "invalid_arguments" and "notation" in error["message"]
    out = await execute_call(FunctionCall("recent_channel_messages", {"count": 99}), default_registry(),
                             ToolContext())
    assert error_of(out.content)["type"] == "invalid_arguments"


async def test_tool_errors_timeouts_and_crashes_become_results(caplog) -> None:
    registry = ToolRegistry([Tool("hang", "never answers", NoArgs, _hang),
                             Tool("boom", "raises", NoArgs, _boom)])
    calls = [FunctionCall("hang", {}, id="a"), FunctionCall("boom", {}, id="b")]
    with caplog.at_level(logging.WARNING):
        hung, crashed = await execute_calls(calls, registry, ToolContext(), timeout=0.01)
    assert error_of(hung.content)["type"] == "tool_execution_failed" and "longer than" in hung.content
    assert error_of(crashed.content) == {"type": "tool_execution_failed",
                                         "message": "the tool failed unexpectedly"}
    assert "sk-should-not-leak" not in crashed.content
    bad_zone = await execute_call(FunctionCall("current_time", {"timezone": "Nowhere/Land"}),
                                  default_registry(), ToolContext())
    assert error_of(bad_zone.content)["type"] == "tool_error" and "Nowhere/Land" in bad_zone.content


async def test_truncated_call_is_never_dispatched(caplog) -> None:
    ran: list[str] = []

    async def record(args: NoArgs, context: ToolContext) -> str:
        ran.append("ran")
        return "ran"

    registry = ToolRegistry([Tool("record", "records", NoArgs, record)])
    with caplog.at_level(logging.ERROR):
        out = await execute_call(FunctionCall("record", {}, id="t", arguments_truncated=True), registry,
                                 ToolContext())
    assert ran == [] and not out.ok
    assert error_of(out.content)["type"] == "tool_execution_failed"
    assert [r.levelname for r in caplog.records if "truncated" in r.getMessage()] == ["ERROR"]


async def test_history_pairs_each_call_with_its_result_in_order() -> None:
    calls = [FunctionCall("roll_dice", {"notation": "1d4"}, id="x"),
             FunctionCall("missing", {}, id="y")]
    results = await execute_calls(calls, default_registry(), ToolContext())
    assistant, first, second = history_for("thinking out loud", results)
    assert assistant.role == "assistant" and list(assistant.tool_calls) == calls
    assert assistant.content == "thinking out loud"
    assert (first.role, first.tool_call_id, first.name) == ("tool", "x", "roll_dice")
    assert 1 <= json.loads(first.content)["result"]["total"] <= 4
    assert (second.tool_call_id, second.name) == ("y", "missing")
    assert error_of(second.content)["available_tools"] == default_registry().names()
