"""Where /metrics and /healthz listen: 127.0.0.1 unless METRICS_HOST opens them (compose
sets 0.0.0.0 inside its network), read from the real bot's settings."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from bot.load.observability import Observability
from tests.support.drive_discord_client import llmbot_factory


@pytest.mark.parametrize(("env", "host"), [({}, "127.0.0.1"), ({"METRICS_HOST": "0.0.0.0"}, "0.0.0.0")])
async def test_metrics_listen_where_metrics_host_says(tmp_path: Path, env: dict[str, str], host: str) -> None:
    bot = llmbot_factory(tmp_path)(METRICS_PORT="9100", **env)
    server = Observability(bot, 0)  # as the bot builds it (no host given), on a free port
    await server.start()
    try:
        assert [address[0] for address in server._runner.addresses] == [host]  # type: ignore[union-attr]
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{server.port}/metrics") as r:
            assert r.status == 200 and "answers_in_flight" in await r.text()
    finally:
        await server.stop()
        await bot.engine.dispose()  # never started: nothing else to close
