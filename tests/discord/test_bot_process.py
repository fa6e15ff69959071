"""`python -m bot`, configured only by environment variables, against the fake Discord."""

from __future__ import annotations

from pathlib import Path

from tests.support.drive_discord_client import bot_process
from tests.support.fake_discord_server import FakeDiscord


async def test_bot_process_logs_in_and_migrates(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    async with bot_process(fake_discord, {}, tmp_path) as run:
        assert run.process.returncode is None
    assert fake_discord.count("GET", r"^/users/@me$") == 1
    assert fake_discord.count("GET", r"^/gateway/bot$") == 1  # AutoShardedBot asks for the URL
    assert (tmp_path / "bot.sqlite3").stat().st_size > 0
    assert run.process.returncode == 0, run.log()
