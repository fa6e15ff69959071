"""Getting the bot into a server, through the real `python -m bot` against the fake Discord:
the invite link it logs at start, and the one line it ends with when the application was
not granted the Message Content intent (the gateway closes with 4014)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from bot.edge.invite import MESSAGE_CONTENT_MISSING
from tests.support.drive_discord_client import REPO_ROOT, bot_process
from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord

# Discord's permission bits, written out independently of discord.py.
VIEW_CHANNEL, SEND_MESSAGES, EMBED_LINKS, ATTACH_FILES, READ_HISTORY = 1 << 10, 1 << 11, 1 << 14, 1 << 15, 1 << 16
SEND_IN_THREADS, CREATE_PUBLIC_THREADS = 1 << 38, 1 << 35


async def test_the_invite_link_is_logged_with_exactly_the_needed_permissions(
        fake_discord: FakeDiscord, tmp_path: Path) -> None:
    fake = fake_discord
    async with bot_process(fake, {"LOG_LEVEL": "INFO"}, tmp_path) as run:
        await run.wait_for(lambda: "invite the bot" in run.log())
        log = run.log()
    permissions = (VIEW_CHANNEL | SEND_MESSAGES | SEND_IN_THREADS | CREATE_PUBLIC_THREADS | EMBED_LINKS
                   | ATTACH_FILES | READ_HISTORY)
    url = (f"https://discord.com/oauth2/authorize?client_id={fake.application_id}"
           f"&scope=bot+applications.commands&permissions={permissions}")
    assert [line.rsplit(" ", 1)[-1] for line in log.splitlines() if "invite the bot" in line] == [url], log


async def test_a_missing_message_content_intent_stops_start_up_with_one_line(
        fake_discord: FakeDiscord, tmp_path: Path) -> None:
    fake = fake_discord
    fake.identify_close_code = 4014
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO_ROOT),
           "DISCORD_TOKEN": BOT_TOKEN, "DISCORD_API_BASE_URL": fake.api_url, "DISCORD_GATEWAY_URL": fake.gateway_url,
           "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}", "LOG_LEVEL": "WARNING"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    output = (stdout + stderr).decode()
    assert process.returncode == 2, output
    assert output.count(MESSAGE_CONTENT_MISSING) == 1, output
    assert "Traceback" not in output, output
    assert stderr.decode().strip().splitlines()[-1] == MESSAGE_CONTENT_MISSING
