"""Run a real discord.py bot against the fake Discord inside a test.

    async with FakeDiscord() as fake, running_bot(fake, bot) as run:
        await fake.send_user_message("<@bot> hi", mention_bot=True)
        await run.wait_for(lambda: fake.bot_messages())

`running_bot` points discord.py at the fake (its REST base `Route.BASE` and the gateway
URL, restored afterwards), starts the bot in a task, waits for `on_ready` and watches
the task: a gateway parser KeyError kills a discord.py client silently, so any wait
fails loudly with the bot's exception instead of timing out. Import the fixtures with
`from tests.support.drive_discord_client import fake_discord  # noqa: F401` in a conftest.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import discord.gateway
import discord.http
import pytest
import yarl

from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord


@contextlib.contextmanager
def pointed_at(fake: FakeDiscord) -> Iterator[None]:
    """Redirect discord.py's REST base and gateway URL to `fake`, then restore them."""
    old_base = discord.http.Route.BASE
    old_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = fake.api_url
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    try:
        yield
    finally:
        discord.http.Route.BASE = old_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = old_gateway


def fast_ready_kwargs() -> dict[str, Any]:
    """Constructor options every test bot should use: on_ready right after GUILD_CREATE."""
    return {"guild_ready_timeout": 0.05}


def llmbot_factory(database_dir: Path, database_name: str = "bot.sqlite3") -> Callable[..., Any]:
    """`make(**settings)` builds the real LLMBot on a SQLite file in `database_dir` with one
    fixed encryption key (kept on `make.encryption_key`, the folder on `make.database_dir`)."""
    from cryptography.fernet import Fernet

    from bot.app import LLMBot
    from bot.settings import load_settings

    key = Fernet.generate_key().decode()

    def make(**env: Any) -> Any:
        values = {"DATABASE_URL": f"sqlite+aiosqlite:///{database_dir}/{database_name}",
                  "BOT_ENCRYPTION_KEY": key, **env}
        return LLMBot(load_settings(_env_file=None, **values), **fast_ready_kwargs())

    make.database_dir = database_dir  # type: ignore[attr-defined]
    make.encryption_key = key  # type: ignore[attr-defined]
    return make


@dataclass
class RunningBot:
    fake: FakeDiscord
    bot: discord.Client
    task: asyncio.Task[None]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """Wait for fake-Discord state; raise at once with the bot's error if it died."""
        await self.fake.wait_for(predicate, timeout, watch=self.task)

    def assert_alive(self) -> None:
        if self.task.done():
            exc = None if self.task.cancelled() else self.task.exception()
            raise AssertionError(f"the bot stopped: {exc!r}")


async def _until_ready(bot: discord.Client, task: asyncio.Task[None], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not bot.is_ready():
        if task.done():
            exc = None if task.cancelled() else task.exception()
            raise AssertionError(f"the bot stopped before on_ready: {exc!r}")
        if loop.time() > deadline:
            raise AssertionError("the bot did not reach on_ready against the fake Discord")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def running_bot(fake: FakeDiscord, bot: discord.Client, *, token: str = BOT_TOKEN,
                      ready_timeout: float = 15.0) -> AsyncIterator[RunningBot]:
    """Start `bot` against `fake`, yield once it is ready, close it cleanly afterwards."""
    with pointed_at(fake):
        task = asyncio.create_task(bot.start(token), name="bot-under-test")
        run = RunningBot(fake, bot, task)
        try:
            await _until_ready(bot, task, ready_timeout)
            yield run
            run.assert_alive()
        finally:
            if not bot.is_closed():
                await bot.close()
            await asyncio.wait({task}, timeout=5)  # never raises: the task's fate is checked below
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
    if not task.cancelled() and task.exception() is not None:
        raise AssertionError(f"the bot ended with an error: {task.exception()!r}")


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    """A fresh fake Discord on a free port (message buckets 5 per 5 s per channel)."""
    async with FakeDiscord() as fake:
        yield fake


REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class BotProcess:
    fake: FakeDiscord
    process: asyncio.subprocess.Process
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        """Wait for fake-Discord state; fail at once (with the bot's log) if the process died."""
        watch = asyncio.ensure_future(self.process.wait())
        try:
            await self.fake.wait_for(predicate, timeout, watch=watch)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- bot log ---\n{self.log()[-4000:]}") from None
        finally:
            watch.cancel()


@contextlib.asynccontextmanager
async def bot_process(fake: FakeDiscord, env: dict[str, str], workdir: Path,
                      *, ready_timeout: float = 30.0) -> AsyncIterator[BotProcess]:
    """Run `python -m bot` configured only by environment variables against `fake`.

    The working directory is `workdir`, so no `.env` of the developer leaks in. The
    process has identified on the gateway (so its cogs are loaded and `bot.user` is
    known) when this yields; it gets SIGINT (discord.py's graceful close) on exit.
    """
    full_env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(REPO_ROOT),
        "DISCORD_TOKEN": BOT_TOKEN, "DISCORD_API_BASE_URL": fake.api_url,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'bot.sqlite3'}",
        **env,
    }
    log_path = workdir / "bot.log"
    fake.identified.clear()
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=workdir, env=full_env,
            stdout=log_file, stderr=asyncio.subprocess.STDOUT)
    run = BotProcess(fake, process, log_path)
    try:
        await run.wait_for(fake.identified.is_set, ready_timeout)
        yield run
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
