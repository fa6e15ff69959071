"""Start-up failures an operator can cause, through the real `python -m bot` (and
`python -m bot.migrate`) as a subprocess: each ends with at most three lines naming the
cause and the setting, exit status 2 and no traceback (the traceback only at DEBUG)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from bot import migrate
from bot.db.engine import create_engine, session_factory
from bot.encryption_key import resolve_encryption_keys
from bot.repo.keys import add_server_key
from bot.settings import load_settings
from bot.vault import Vault
from tests.support.env_postgres import POSTGRES_URL, SKIP_REASON
from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord

ROOT = Path(__file__).resolve().parents[2]
# A log record as discord.utils.setup_logging (`[date] [LEVEL] name: …`) or logging.basicConfig writes it.
LOG_RECORD = re.compile(r"^(\[?\d{4}-\d\d-\d\d [\d:]+\]? \[?(DEBUG|INFO|WARNING|ERROR|CRITICAL)\s*\]?"
                        r"|(DEBUG|INFO|WARNING|ERROR|CRITICAL) \S+: )")

ANSI = re.compile(r"\x1b\[[0-9;]*m")  # discord.py colours its log when it thinks the stream takes it


def free_port() -> int:
    """A local port nothing listens on (bound for a moment, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(tmp_path: Path, env: dict[str, str], module: str = "bot") -> subprocess.CompletedProcess[str]:
    full_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
                "LOG_LEVEL": "INFO", **env}
    return subprocess.run([sys.executable, "-m", module], cwd=tmp_path, env=full_env,
                          capture_output=True, text=True, timeout=120)


def operator_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """What the process ended with: exit 2, no traceback, and the lines after its last log
    record (at most three), which the caller checks for the cause and the setting."""
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    lines = ANSI.sub("", result.stderr).rstrip("\n").splitlines()
    last_record = max((i for i, line in enumerate(lines) if LOG_RECORD.match(line)), default=-1)
    tail = [line for line in lines[last_record + 1:] if line.strip()]
    assert 1 <= len(tail) <= 3, result.stderr[-3000:]
    assert not any(re.match(r"^\S+ \S+ \[?ERROR", line) for line in lines), result.stderr[-3000:]
    return tail


def fernet_key() -> str:
    return Fernet.generate_key().decode()


# ---- the database --------------------------------------------------------------------------

@pytest.mark.parametrize("module", ["bot.migrate", "bot"])
def test_postgresql_unreachable_is_one_line(tmp_path: Path, module: str) -> None:
    port = free_port()
    result = run(tmp_path, {"DISCORD_TOKEN": "x", "BOT_ENCRYPTION_KEY": fernet_key(),
                            "DATABASE_URL": f"postgresql+asyncpg://bot:s3cret-pw@127.0.0.1:{port}/bot"}, module)
    [line] = operator_lines(result)
    assert "DATABASE_URL" in line and f"127.0.0.1:{port}" in line and "refused" in line
    assert "s3cret-pw" not in result.stderr  # the password never reaches the output


@pytest.mark.parametrize("layout", ["parent_is_a_file", "path_is_a_folder"])
def test_sqlite_path_that_cannot_be_written_is_one_line(tmp_path: Path, layout: str) -> None:
    # Blocked by the file system's shape rather than permissions, so it holds as root too.
    if layout == "parent_is_a_file":
        (tmp_path / "blocker").write_text("")
        database = tmp_path / "blocker" / "bot.sqlite3"
    else:
        database = tmp_path / "bot.sqlite3"
        database.mkdir()
    result = run(tmp_path, {"DISCORD_TOKEN": "x", "BOT_ENCRYPTION_KEY": fernet_key(),
                            "DATABASE_URL": f"sqlite+aiosqlite:///{database}"})
    [line] = operator_lines(result)
    assert "DATABASE_URL" in line and str(database.parent if layout == "parent_is_a_file" else database) in line


@pytest.fixture
def postgres_schema_name() -> Iterator[str]:
    """A schema name that does not exist yet, dropped afterwards if start-up created it."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_REASON)
    name = f"t_missing_{uuid.uuid4().hex[:10]}"
    yield name
    import asyncio

    async def drop() -> None:
        engine = create_engine(POSTGRES_URL)
        try:
            async with engine.begin() as conn:
                await conn.execute(text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))
        finally:
            await engine.dispose()

    asyncio.run(drop())


def test_a_missing_search_path_schema_is_created(tmp_path: Path, postgres_schema_name: str) -> None:
    url = f"{POSTGRES_URL}?search_path={postgres_schema_name}"
    result = run(tmp_path, {"DATABASE_URL": url}, "bot.migrate")
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"created the schema '{postgres_schema_name}'" in result.stderr
    import asyncio

    async def tables() -> set[str]:
        engine = create_engine(POSTGRES_URL)
        try:
            async with engine.connect() as conn:
                rows = await conn.execute(text("SELECT table_name FROM information_schema.tables "
                                               "WHERE table_schema = :s"), {"s": postgres_schema_name})
                return {row[0] for row in rows}
        finally:
            await engine.dispose()

    assert {"alembic_version", "server_api_keys"} <= asyncio.run(tables())


def test_a_missing_schema_this_login_may_not_create_is_one_line(tmp_path: Path, postgres_schema_name: str) -> None:
    import asyncio

    role = f"r_{uuid.uuid4().hex[:10]}"

    async def roles(statement: str) -> None:
        engine = create_engine(POSTGRES_URL)  # type: ignore[arg-type]
        try:
            async with engine.begin() as conn:
                await conn.execute(text(statement))
        finally:
            await engine.dispose()

    asyncio.run(roles(f'CREATE ROLE "{role}" LOGIN'))  # no CREATE right on the database
    try:
        login = re.sub(r"://[^@/]*@", f"://{role}@", POSTGRES_URL)  # type: ignore[arg-type]
        for module in ("bot.migrate", "bot"):
            result = run(tmp_path, {"DISCORD_TOKEN": "x", "BOT_ENCRYPTION_KEY": fernet_key(),
                                    "DATABASE_URL": f"{login}?search_path={postgres_schema_name}"}, module)
            [line] = operator_lines(result)
            assert postgres_schema_name in line and "DATABASE_URL" in line and "CREATE SCHEMA" in line
    finally:
        asyncio.run(roles(f'DROP ROLE "{role}"'))


# ---- Discord ---------------------------------------------------------------------------------

def sqlite_env(tmp_path: Path) -> dict[str, str]:
    return {"DISCORD_TOKEN": BOT_TOKEN, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}"}


def test_discord_unreachable_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    result = run(tmp_path, {**sqlite_env(tmp_path), "DISCORD_API_BASE_URL": f"http://127.0.0.1:{port}/api/v10"})
    [line] = operator_lines(result)
    assert "Discord" in line and "DISCORD_API_BASE_URL" in line and f"127.0.0.1:{port}" in line


def test_the_traceback_is_logged_at_debug_only(tmp_path: Path) -> None:
    port = free_port()
    env = {**sqlite_env(tmp_path), "DISCORD_API_BASE_URL": f"http://127.0.0.1:{port}/api/v10"}
    result = run(tmp_path, {**env, "LOG_LEVEL": "DEBUG"})
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "ClientConnectorError" in result.stderr
    assert "Cannot reach Discord" in result.stderr.strip().splitlines()[-1]


async def run_async(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`run`, awaited, so the fake Discord on this test's loop keeps answering."""
    import asyncio

    full_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
                "LOG_LEVEL": "INFO", **env}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", cwd=tmp_path, env=full_env,
                                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return subprocess.CompletedProcess([], process.returncode or 0, stdout.decode(), stderr.decode())


async def test_a_refused_token_is_one_line(tmp_path: Path) -> None:
    async with FakeDiscord() as fake:
        fake.fail("GET", r"^/users/@me$", 401, message="401: Unauthorized")
        result = await run_async(tmp_path, {**sqlite_env(tmp_path), "DISCORD_API_BASE_URL": fake.api_url,
                                            "DISCORD_GATEWAY_URL": fake.gateway_url})
    [line] = operator_lines(result)
    assert "DISCORD_TOKEN" in line


async def test_a_missing_intent_is_one_line(tmp_path: Path) -> None:
    async with FakeDiscord() as fake:
        fake.identify_close_code = 4014
        result = await run_async(tmp_path, {**sqlite_env(tmp_path), "DISCORD_API_BASE_URL": fake.api_url,
                                            "DISCORD_GATEWAY_URL": fake.gateway_url})
    [line] = operator_lines(result)
    assert "Message Content" in line


async def test_a_metrics_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with FakeDiscord() as fake:
            result = await run_async(tmp_path, {**sqlite_env(tmp_path), "METRICS_PORT": str(port),
                                                "DISCORD_API_BASE_URL": fake.api_url,
                                                "DISCORD_GATEWAY_URL": fake.gateway_url})
    [line] = operator_lines(result)
    assert "METRICS_PORT" in line and str(port) in line


# ---- contradictory settings ----------------------------------------------------------------

@pytest.mark.parametrize(("env", "named"), [
    ({"SHARD_IDS": "1"}, "SHARD_IDS"),
    ({"SHARD_IDS": "5", "SHARD_COUNT": "2"}, "SHARD_IDS"),
    ({"SHARD_IDS": "0,0", "SHARD_COUNT": "2"}, "SHARD_IDS"),
    ({"DEFAULT_TEXT_PROVIDER": "openai", "DEFAULT_TEXT_API_KEYS": "sk-x"}, "DEFAULT_TEXT_MODEL"),
    ({"DEFAULT_TEXT_MODEL": "gpt-4o-mini"}, "DEFAULT_TEXT_PROVIDER"),
    ({"DEFAULT_TEXT_API_KEYS": "sk-x"}, "DEFAULT_TEXT_PROVIDER"),
    ({"DEFAULT_TEXT_PROVIDER": "openai", "DEFAULT_TEXT_MODEL": "gpt-4o-mini"}, "DEFAULT_TEXT_API_KEYS"),
    ({"DEFAULT_TEXT_PROVIDER": "custom", "DEFAULT_TEXT_MODEL": "local"}, "DEFAULT_TEXT_BASE_URL"),
    ({"DISCORD_GLOBAL_RATE": "0"}, "DISCORD_GLOBAL_RATE"),
])
def test_contradictory_settings_are_refused_in_one_line(tmp_path: Path, env: dict[str, str], named: str) -> None:
    base = {**sqlite_env(tmp_path), "BOT_ENCRYPTION_KEY": fernet_key()}
    if "DISCORD_GLOBAL_RATE" not in env:  # (a proxy in DISCORD_API_BASE_URL is what makes a rate of 0 valid)
        # Were the settings accepted, the bot would go on to this closed port and fail differently.
        base["DISCORD_API_BASE_URL"] = f"http://127.0.0.1:{free_port()}/api/v10"
    result = run(tmp_path, {**base, **env})
    [line] = operator_lines(result)
    assert line.startswith(f"Invalid setting {named}:"), line
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before anything was touched


# ---- the generated encryption key ----------------------------------------------------------

async def test_a_missing_key_file_with_stored_keys_stops_start_up(tmp_path: Path) -> None:
    database = tmp_path / "data" / "bot.sqlite3"
    settings = load_settings(_env_file=None, DATABASE_URL=f"sqlite+aiosqlite:///{database}")
    engine = create_engine(settings.DATABASE_URL)
    try:
        await migrate.upgrade(engine)
        vault = Vault(resolve_encryption_keys(settings))  # generates data/encryption.key
        async with session_factory(engine)() as session, session.begin():
            await add_server_key(session, vault, 1234, "openai", "sk-stored-key-0001")
    finally:
        await engine.dispose()
    key_file = tmp_path / "data" / "encryption.key"
    key_file.unlink()  # a restore that brought back the database but not the key

    import asyncio

    for module in ("bot", "bot.vault"):
        env = {"DISCORD_TOKEN": "x", "DATABASE_URL": "sqlite+aiosqlite:///data/bot.sqlite3",
               "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10"}
        args = [sys.executable, "-m", module, *(["rotate"] if module == "bot.vault" else [])]
        process = await asyncio.create_subprocess_exec(
            *args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), **env})
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
        result = subprocess.CompletedProcess(args, process.returncode or 0, stdout.decode(), stderr.decode())
        [line] = operator_lines(result)
        assert "data/encryption.key" in line and "BOT_ENCRYPTION_KEY" in line and "1 API key" in line
        assert not key_file.exists()  # no new key was made over the lost one
