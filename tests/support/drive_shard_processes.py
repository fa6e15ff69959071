"""Real `python -m bot` processes, one shard each, on one PostgreSQL schema, against the
sharded fake Discord: start them at the same instant, wait on the fake's state (failing
at once, with their logs, if one ends), ask questions and read the answers back.

    async with postgres_database_url() as url, FakeDiscord(shards=3) as fake:
        async with shard_processes(fake, {"DATABASE_URL": url, ...}, tmp_path) as run:
            await run.wait_for(lambda: fake.ready_shards() == {0, 1, 2}, timeout=60)

`api_url` sends REST elsewhere (a REST proxy in front of the fake); the gateway stays the
fake's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from bot.db.engine import create_engine
from tests.support.check_answers import INDICATOR
from tests.support.drive_discord_client import REPO_ROOT
from tests.support.env_postgres import POSTGRES_URL, SKIP_REASON
from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord, StoredMessage


@dataclass
class ShardProcesses:
    """The bot processes of one run (index i serves shard i) and their logs."""

    fake: FakeDiscord
    processes: list[asyncio.subprocess.Process]
    logs: list[Path]

    def log(self) -> str:
        return "\n".join(f"--- process {i} ---\n{path.read_text(errors='replace')[-3000:]}"
                         for i, path in enumerate(self.logs))

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
        """Wait for fake-Discord state; fail at once, with the logs, if a process ended."""
        watch = asyncio.ensure_future(asyncio.wait([asyncio.ensure_future(p.wait()) for p in self.processes],
                                                   return_when=asyncio.FIRST_COMPLETED))
        try:
            await self.fake.wait_for(predicate, timeout, watch=watch)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.log()}") from None
        finally:
            watch.cancel()


def process_env(fake: FakeDiscord, index: int, workdir: Path, shared: dict[str, str],
                api_url: str | None = None) -> dict[str, str]:
    """Process `index` of the fake's shards serves shard `index` (SHARD_PROCESSES and
    PROCESS_INDEX derive SHARD_IDS)."""
    shards = str(fake.shards)
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(REPO_ROOT),
            "DISCORD_TOKEN": BOT_TOKEN, "DISCORD_API_BASE_URL": api_url or fake.api_url,
            "DISCORD_GATEWAY_URL": fake.gateway_url, "SHARD_COUNT": shards, "SHARD_PROCESSES": shards,
            "PROCESS_INDEX": str(index), **shared}


@contextlib.asynccontextmanager
async def shard_processes(fake: FakeDiscord, shared: dict[str, str], tmp_path: Path,
                          api_url: str | None = None) -> AsyncIterator[ShardProcesses]:
    """One process per shard, started at the same instant; SIGINT (a graceful close) to
    each on exit."""
    processes, logs = [], []
    for index in range(fake.shards):
        workdir = tmp_path / f"process-{index}"
        workdir.mkdir(parents=True)
        logs.append(workdir / "bot.log")
        with logs[-1].open("wb") as log_file:
            processes.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", cwd=workdir, env=process_env(fake, index, workdir, shared, api_url),
                stdout=log_file, stderr=asyncio.subprocess.STDOUT))
    try:
        yield ShardProcesses(fake, processes, logs)
    finally:
        await stop_processes(processes)


async def stop_processes(processes: list[asyncio.subprocess.Process], grace: float = 15.0) -> None:
    """SIGINT (a graceful close) to each running process; killed after `grace` seconds."""
    for process in processes:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
    for process in processes:
        try:
            await asyncio.wait_for(process.wait(), grace)
        except TimeoutError:
            process.kill()
            await process.wait()


@contextlib.asynccontextmanager
async def postgres_database_url() -> AsyncIterator[str]:
    """A DATABASE_URL on a fresh schema of TEST_POSTGRES_URL (dropped afterwards)."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_REASON)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_URL)
    try:
        yield f"{POSTGRES_URL}?search_path={schema}"
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await admin.dispose()


def replies_to(fake: FakeDiscord, question: StoredMessage) -> list[StoredMessage]:
    return [m for m in fake.bot_messages() if not m.deleted
            and (m.message_reference or {}).get("message_id") == question.id]


def answered(fake: FakeDiscord, question: StoredMessage, expected: str) -> bool:
    shown = [m.content for m in replies_to(fake, question)]
    return bool(shown) and not any(INDICATOR in c for c in shown) and "".join(shown) == expected


async def ask(fake: FakeDiscord, channel_id: str, tag: str, author: dict[str, Any] | None = None) -> StoredMessage:
    """A member mentions the bot; `[tag]` in the text finds the question's provider request."""
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> [{tag}] a question", mention_bot=True,
                                        channel_id=channel_id, author=author)


def most_in_any_second(times: list[float]) -> int:
    times = sorted(times)
    best = start = 0
    for end, at in enumerate(times):
        while times[start] <= at - 1.0:
            start += 1
        best = max(best, end - start + 1)
    return best
