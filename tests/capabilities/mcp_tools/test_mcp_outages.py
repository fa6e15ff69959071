"""A crashing or hanging MCP server does not break answers, through the real bot: the
call that found it down is the tool's error the model reads, the answer is delivered,
the server is started again with backoff (its tools not offered meanwhile), and the log
has one line per outage, not one per retry."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from bot.capabilities.mcp_tools import link as link_module
from bot.capabilities.mcp_tools import tool as tool_module
from tests.capabilities.mcp_tools.servers import servers_file
from tests.capabilities.mcp_tools.test_mcp_turn import answers, ask, start, tool_call, tool_result
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

LINK_LOG = "bot.capabilities.mcp_tools.link"


def outage_lines(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LINK_LOG and r.levelno >= logging.WARNING
            and words in r.getMessage()]


async def test_a_server_that_crashes_mid_answer_is_restarted(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LINK_LOG)
    fake, server = fake_discord, provider_server
    path, _notes = servers_file(tmp_path)
    server.enqueue(tool_call("tiny__crash", {}), openai_stream("The tool server fell over."))
    bot = turn_bot(MCP_SERVERS=str(path))
    async with running_bot(fake, bot) as run:
        await start(run, bot, fake, server)
        tiny = bot.get_cog("ToolsCog").hub.links["tiny"]
        await ask(fake, "crash it")
        await run.wait_for(lambda: "The tool server fell over." in answers(fake), timeout=20)
        await run.wait_for(lambda: tiny.up and bool(outage_lines(caplog, "back with")), timeout=30)
    error = tool_result(server)["error"]
    assert error["type"] == "tool_error" and "unavailable right now" in error["message"]
    assert len(outage_lines(caplog, "is unavailable")) == 1
    assert outage_lines(caplog, "back with") == ["MCP server tiny is back with 5 tools"]


async def test_a_server_that_never_starts_costs_answers_nothing(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LINK_LOG)
    fake, server = fake_discord, provider_server
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"broken": {"command": sys.executable,
                                                           "args": ["-c", "raise SystemExit(1)"]}}}))
    server.enqueue(openai_stream("Answered anyway."))
    bot = turn_bot(MCP_SERVERS=str(path))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        retries = lambda: sum("still unavailable" in r.getMessage() for r in caplog.records)  # noqa: E731
        await run.wait_for(lambda: retries() >= 2, timeout=20)
        await ask(fake, "hello")
        await run.wait_for(lambda: "Answered anyway." in answers(fake), timeout=20)
    assert not any(tool["function"]["name"].startswith("broken__") for tool in server.requests[0].json.get("tools", []))
    assert len(outage_lines(caplog, "is unavailable")) == 1  # one line for the outage, not one per retry


async def test_a_hanging_call_is_bounded_and_the_server_restarted(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_module, "CALL_SECONDS", 1.0)
    monkeypatch.setattr(link_module, "PING_TIMEOUT", 1.0)
    caplog.set_level(logging.DEBUG, logger=LINK_LOG)
    fake, server = fake_discord, provider_server
    path, _notes = servers_file(tmp_path)
    server.enqueue(tool_call("tiny__hang", {}), openai_stream("It hung."))
    bot = turn_bot(MCP_SERVERS=str(path))
    async with running_bot(fake, bot) as run:
        await start(run, bot, fake, server)
        await ask(fake, "hang")
        await run.wait_for(lambda: "It hung." in answers(fake), timeout=20)
        await run.wait_for(lambda: bool(outage_lines(caplog, "back with")), timeout=30)
    error = tool_result(server)["error"]
    assert error["type"] == "tool_error" and "did not answer within 1s" in error["message"]
    assert len(outage_lines(caplog, "is unavailable")) == 1
