"""A streamable-HTTP MCP server through the real bot: the tiny server served by uvicorn
(the SDK's own app), answering only the bearer token the operator's file sends as a
header; with the right header its read-only tool runs, with a wrong one the server is
one outage line and answers go on without its tools."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capabilities.mcp_tools.test_mcp_turn import answers, ask, start, tool_call, tool_result
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

TOKEN = "tok-3141592653"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The tiny server on streamable HTTP; its /mcp URL once it accepts connections."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "MCP_TOKEN": TOKEN,
           "NOTES_FILE": str(tmp_path / "notes.txt")}
    process = subprocess.Popen([sys.executable, "-m", "tests.capabilities.mcp_tools.tiny_server", "http", str(port)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "the HTTP MCP server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def http_file(folder: Path, url: str, token: str) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"tiny": {"type": "http", "url": url,
                                                        "headers": {"Authorization": f"Bearer {token}"}}}}))
    return path


async def test_an_http_server_with_its_header_serves_its_tools(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path,
        http_server: str) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(tool_call("tiny__lookup", {"word": "heron"}), openai_stream("A heron, over HTTP."))
    bot = turn_bot(MCP_SERVERS=str(http_file(tmp_path, http_server, TOKEN)))
    async with running_bot(fake, bot) as run:
        await start(run, bot, fake, server)
        await ask(fake, "what is a heron?")
        await run.wait_for(lambda: "A heron, over HTTP." in answers(fake), timeout=20)
    assert tool_result(server)["result"]["untrusted_data"] == "heron: a small test word"


async def test_a_refused_header_is_one_outage_and_answers_go_on(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path,
        http_server: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.capabilities.mcp_tools.link")
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("No tools today."))
    bot = turn_bot(MCP_SERVERS=str(http_file(tmp_path, http_server, "wrong-token")))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await run.wait_for(lambda: any("still unavailable" in r.getMessage() for r in caplog.records), timeout=20)
        await ask(fake, "hello")
        await run.wait_for(lambda: "No tools today." in answers(fake), timeout=20)
    assert not any(t["function"]["name"].startswith("tiny__") for t in server.requests[0].json.get("tools", []))
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len([w for w in warnings if "is unavailable" in w]) == 1
    assert not any("wrong-token" in r.getMessage() or TOKEN in r.getMessage() for r in caplog.records)
