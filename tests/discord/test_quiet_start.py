"""A start an operator can read: the real `python -m bot` against the fake Discord, its
output not a terminal (as under Docker or a service manager). No colour codes, no voice
library warnings, no token line, the database's creation in one line, at most 15 lines
until "ready" at the default level; an upgrade says each migration in one line."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from bot import migrate
from bot.db.engine import create_engine
from tests.support.drive_discord_client import bot_process
from tests.support.fake_discord_server import FakeDiscord

READY = re.compile(r"\] bot\.cogs\.servers: ready: ")


async def start_log(fake: FakeDiscord, workdir: Path) -> list[str]:
    async with bot_process(fake, {}, workdir) as run:
        await run.wait_for(lambda: READY.search(run.log()) is not None)
        return run.log().splitlines()


async def test_the_first_start_is_short_plain_and_says_the_database_once(
        fake_discord: FakeDiscord, tmp_path: Path) -> None:
    first = await start_log(fake_discord, tmp_path)
    again = await start_log(fake_discord, tmp_path)
    until_ready = first[:next(i for i, line in enumerate(first) if READY.search(line)) + 1]
    assert len(until_ready) <= 15, "\n".join(until_ready)
    assert not any("\x1b[" in line for line in first)  # not a terminal: no colour codes
    assert not any(word in line for line in first for word in ("PyNaCl", "davey", "voice", "static token"))
    assert [line for line in first if "bot.migrate" in line] == [
        next(line for line in first if "created the database:" in line)]
    assert not any("alembic" in line for line in first + again)
    assert not any("bot.migrate" in line for line in again)  # nothing to migrate: nothing said
    assert all(line.startswith("[") for line in until_ready), until_ready  # one line per record


async def test_an_upgrade_says_each_migration_in_one_line(tmp_path: Path, caplog) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path}/old.sqlite3")
    try:
        await migrate.upgrade(engine, "0009_answer_sources")
        caplog.clear()
        caplog.set_level(logging.INFO, logger="bot.migrate")
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()
    assert [r.getMessage() for r in caplog.records if r.name == "bot.migrate"] == [
        "migrated the database to 0010_read_links: read links",
        "migrated the database to 0011_identify: identify turns",
        "migrated the database to 0012_capability_settings: capability settings",
        "migrated the database to 0013_memory: memory",
        "migrated the database to 0014_reminders: reminders",
        "migrated the database to 0015_images: images",
        "migrated the database to 0016_voice: voice",
        "migrated the database to 0017_mcp_tools: mcp tools",
        "migrated the database to 0018_image_routes: image routes",
        "migrated the database to 0019_image_prices: image prices",
        "migrated the database to 0020_operator_images: operator images",
    ]
