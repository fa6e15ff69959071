"""Apply the alembic migrations, from a shell (`python -m bot.migrate`) or from inside
the running event loop on start (the connection is handed to migrations/env.py, so
alembic never calls asyncio.run inside a loop).

A PostgreSQL schema named by `?search_path=` is created when it does not exist yet (a
login that may not create it gets one line saying what to run). A failure the operator can
fix ends `python -m bot.migrate` with one line and status 2, the traceback at DEBUG.

Shard processes start together and each migrates on start, so a run holds a database-wide
lock: without it two processes both find the schema empty and both create the tables, and
the slower one crashes on "already exists" or a duplicate alembic version row.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.db.engine import (
    SchemaMissingError,
    create_engine,
    describe_database_failure,
    exception_chain,
)
from bot.logs import quiet_alembic
from bot.settings import SettingsError, load_settings

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
# First half of PostgreSQL's two-part advisory lock key; the second half is the schema's
# hash, so bots in different schemas of one database do not wait for each other.
ADVISORY_LOCK_CLASS = 0x4C4C4D42  # "LLMB"
SCHEMA_KEY = "hashtext(coalesce(current_schema(), ''))"
# Creating a missing schema: its own lock class, so a process waiting to create a schema
# never also waits for another process's whole migration of it.
SCHEMA_CREATE_LOCK_CLASS = 0x4C4C4D53  # "LLMS"


def alembic_config() -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    return cfg


@asynccontextmanager
async def _advisory_lock(conn: AsyncConnection) -> AsyncIterator[None]:
    """A session-level lock, so it spans every transaction alembic opens on this
    connection and is released only after the migration's commit is visible."""
    await conn.execute(text(f"SELECT pg_advisory_lock(:cls, {SCHEMA_KEY})"), {"cls": ADVISORY_LOCK_CLASS})
    await conn.commit()
    try:
        yield
    finally:
        if not conn.invalidated:  # a dead connection took its session lock with it
            if conn.in_transaction():
                await conn.rollback()
            await conn.execute(text(f"SELECT pg_advisory_unlock(:cls, {SCHEMA_KEY})"),
                               {"cls": ADVISORY_LOCK_CLASS})
            await conn.commit()


@asynccontextmanager
async def _file_lock(database: str) -> AsyncIterator[None]:
    """An exclusive lock on a file beside the SQLite database.

    Not BEGIN IMMEDIATE: the SQLite driver runs DDL outside any transaction it opened and
    alembic's batch mode toggles PRAGMAs that are ignored inside one, so a transaction
    would not cover the whole run; a SQLite database is always a local file, so a file
    lock serializes every process that can reach it. Waiting happens in a thread, so a
    second migration in this same process cannot block the event loop holding the first.
    """
    path = Path(database).with_name(Path(database).name + ".migrate.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@asynccontextmanager
async def migration_lock(conn: AsyncConnection) -> AsyncIterator[None]:
    """Hold the database's migration lock for the body (outside any transaction)."""
    url = conn.engine.url
    if conn.dialect.name == "postgresql":
        async with _advisory_lock(conn):
            yield
    elif url.database not in (None, "", ":memory:"):
        async with _file_lock(url.database):
            yield
    else:
        yield  # an in-memory database belongs to one connection: nothing can race it


async def _run(engine: AsyncEngine, fn, *args, on_version_apply=None) -> None:
    cfg = alembic_config()
    cfg.attributes["on_version_apply"] = on_version_apply
    async with engine.connect() as conn, migration_lock(conn):
        def go(sync_conn) -> None:
            cfg.attributes["connection"] = sync_conn
            fn(cfg, *args)

        async with conn.begin():
            await conn.run_sync(go)


def _first_schema(search_path: str) -> str | None:
    """The schema new tables go to: the first entry of search_path other than "$user"."""
    for entry in search_path.split(","):
        name = entry.strip()
        if name and name != '"$user"':
            return name[1:-1].replace('""', '"') if name.startswith('"') and name.endswith('"') else name
    return None


async def ensure_schema(engine: AsyncEngine) -> None:
    """Create the schema `?search_path=` names when it is missing, so a first start on a
    shared database needs no manual step; without the right to, say so in one line."""
    if engine.dialect.name != "postgresql":
        return
    async with engine.connect() as conn:
        if await conn.scalar(text("SELECT current_schema()")) is not None:
            return
        schema = _first_schema(await conn.scalar(text("SELECT current_setting('search_path')")) or "")
        if schema is None:
            return
        user = await conn.scalar(text("SELECT current_user"))
        quoted = '"' + schema.replace('"', '""') + '"'
        try:
            # Processes starting together take turns: PostgreSQL answers a second concurrent
            # CREATE SCHEMA IF NOT EXISTS with a unique violation, not with "it exists".
            await conn.execute(text("SELECT pg_advisory_xact_lock(:cls, hashtext(:schema))"),
                               {"cls": SCHEMA_CREATE_LOCK_CLASS, "schema": schema})
            await conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {quoted}"))
            await conn.commit()
        except Exception as exc:
            import asyncpg.exceptions as pg

            if any(isinstance(cause, pg.InsufficientPrivilegeError) for cause in exception_chain(exc)):
                raise SchemaMissingError(schema, str(user)) from exc
            raise
    log.info("created the schema %r named by search_path in DATABASE_URL", schema)


async def upgrade(engine: AsyncEngine, revision: str = "heads") -> None:
    """Apply what is missing; say what was done in one line per migration, or in one line
    for a new database (its history is no news to whoever starts the bot the first time)."""
    await ensure_schema(engine)
    applied: list[tuple[str, str | None, str]] = []

    def record(*, step, **_: object) -> None:
        script = step.up_revision
        applied.append((script.revision, script.down_revision, _title(script.doc or "")))

    await _run(engine, command.upgrade, revision, on_version_apply=record)
    if applied and applied[0][1] is None:
        log.info("created the database: %d migration(s), now at %s", len(applied), applied[-1][0])
        return
    for revision_id, _, title in applied:
        log.info("migrated the database to %s: %s", revision_id, title)


def _title(doc: str) -> str:
    """A migration's name: its docstring's first line up to the colon."""
    return doc.strip().splitlines()[0].split(":")[0].strip() if doc.strip() else ""


async def _main(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


def main() -> int:
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.LOG_LEVEL, format="%(levelname)s %(name)s: %(message)s")
    quiet_alembic()
    try:
        asyncio.run(_main(settings.DATABASE_URL))
    except Exception as exc:
        line = describe_database_failure(exc, settings.DATABASE_URL)
        if line is None:
            raise
        log.debug("migration failed", exc_info=True)
        print(line, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
