"""A provider-sent value reaches a log line escaped and bounded: one line, whatever it holds."""

from __future__ import annotations

import logging

import pytest

from bot.tools import ToolContext, default_registry
from bot.tools.loop import execute_call
from providers.log_safe import LOG_VALUE_LIMIT, loggable
from providers.text.json_repair import parse_tool_arguments
from providers.types import FunctionCall

FORGED = "search\n2026-12-03 12:00:00 CRITICAL bot.admin: operator key rotated"
HUGE = "x" * 10_240
# The fixed words of the longest message below, plus room for the cut note.
MESSAGE_ROOM = 200


def _formatted(caplog: pytest.LogCaptureFixture) -> list[str]:
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    return [formatter.format(record) for record in caplog.records]


def _assert_one_bounded_line(lines: list[str]) -> None:
    assert lines, "nothing was logged"
    for line in lines:
        assert "\n" not in line and "\r" not in line
        assert len(line) <= LOG_VALUE_LIMIT * 2 + MESSAGE_ROOM


@pytest.mark.parametrize("name", [FORGED, HUGE], ids=["line_break", "10kb"])
def test_unparseable_arguments_log_the_tool_name_on_one_bounded_line(name, caplog):
    with caplog.at_level(logging.ERROR, logger="providers.text.json_repair"):
        parse_tool_arguments("not json at all }", adapter="openai", tool_name=name)
    _assert_one_bounded_line(_formatted(caplog))


@pytest.mark.parametrize("name", [FORGED, HUGE], ids=["line_break", "10kb"])
def test_repaired_arguments_log_the_tool_name_on_one_bounded_line(name, caplog):
    with caplog.at_level(logging.ERROR, logger="providers.text.json_repair"):
        parse_tool_arguments('{"query": "wea', adapter="openai", tool_name=name)
    lines = _formatted(caplog)
    _assert_one_bounded_line(lines)
    assert "tool_arguments_truncated" in lines[0]


@pytest.mark.parametrize("name", [FORGED, HUGE], ids=["line_break", "10kb"])
async def test_a_refused_truncated_call_logs_its_name_on_one_bounded_line(name, caplog):
    call = FunctionCall(name=name, args={}, arguments_truncated=True)
    with caplog.at_level(logging.ERROR, logger="bot.tools.loop"):
        result = await execute_call(call, default_registry(), ToolContext())
    assert not result.ok
    lines = _formatted(caplog)
    _assert_one_bounded_line(lines)
    assert "CRITICAL bot.admin" not in lines[0].split("\\n", 1)[0]


def test_loggable_escapes_controls_and_bounds_length():
    assert loggable("get_weather") == "get_weather"
    assert loggable("a\nb\rc\x1b[31md\u2028e\u202ef") == "a\\nb\\rc\\x1b[31md\\u2028e\\u202ef"
    cut = loggable(HUGE)
    assert cut.startswith("x" * LOG_VALUE_LIMIT) and cut.endswith(f"[{len(HUGE) - LOG_VALUE_LIMIT} more chars]")
    assert len(loggable("\n" * 10_000)) < LOG_VALUE_LIMIT + 30
