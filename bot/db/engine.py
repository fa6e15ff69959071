"""Engine creation: the same code for the embedded SQLite file and PostgreSQL.

A PostgreSQL URL may end in `?search_path=<schema>` to keep the bot's tables in their own
schema of a shared database; asyncpg takes that only as a server setting, never as a URL
argument, so it is moved there.

The connection pool is sized for the answers the bot admits at once
(MAX_CONCURRENT_ANSWERS, `pool_size_for`): configuration comes from the process's cache
(`bot.load.config_cache`) and key health and usage are written in batches (`bot.load.write_behind`),
so a turn holds a connection only for a statement or two, mostly when a server's
configuration is first read. One connection per twenty admitted answers (at least 5, at
most 50) stays open and as many again may open in a burst; DATABASE_POOL_SIZE overrides it.
Several processes (SHARD_PROCESSES) share one server's `max_connections` (100 by default), so
the default is divided among them: each keeps at most `CONNECTIONS_ACROSS_PROCESSES` // (2 ×
processes), at least `MIN_SHARED_POOL_SIZE` (2 processes: 20 + 20 each, 8: 5 + 5), and
start-up warns once when all pools together could exceed the server's `max_connections`
(`connections_warning`). Behind PgBouncer in transaction mode (DATABASE_PGBOUNCER) a
statement may reach another server connection than the one it was prepared on, so asyncpg's
statement cache and SQLAlchemy's prepared-statement cache are off and statements get
unique names (SQLAlchemy's asyncpg "Prepared Statement Name with PGBouncer" recipe). A SQLite file
runs in write-ahead-log mode, where readers never wait for the writer, and every
connection waits up to `SQLITE_BUSY_TIMEOUT_MS` for the write lock instead of failing with
"database is locked" when several answers record their keys' health at once.
"""

from __future__ import annotations

import errno
import socket
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

if TYPE_CHECKING:
    from bot.settings import Settings

DEFAULT_POOL_SIZE = 10
SQLITE_BUSY_TIMEOUT_MS = 15_000
ANSWERS_PER_CONNECTION = 20
MIN_POOL_SIZE, MAX_POOL_SIZE = 5, 50
POOL_TIMEOUT_SECONDS = 30.0
# Kept plus burst connections of all processes together, by default: PostgreSQL's default
# max_connections of 100, less room for psql, backups and other clients.
CONNECTIONS_ACROSS_PROCESSES = 80
MIN_SHARED_POOL_SIZE = 2


def pool_size_for(max_concurrent_answers: int, configured: int | None = None, processes: int | None = None) -> int:
    """The operator's DATABASE_POOL_SIZE, else one connection per twenty admitted answers,
    divided among `processes` so that all their pools (kept and burst) stay within
    CONNECTIONS_ACROSS_PROCESSES."""
    if configured is not None:
        return configured
    size = max(MIN_POOL_SIZE, min(MAX_POOL_SIZE, -(-max_concurrent_answers // ANSWERS_PER_CONNECTION)))
    if processes:
        size = min(size, max(MIN_SHARED_POOL_SIZE, CONNECTIONS_ACROSS_PROCESSES // (2 * processes)))
    return size


def engine_for(settings: Settings) -> AsyncEngine:
    """The bot's engine as the operator set it up: the pool sized by `pool_size_for`, PgBouncer's
    transaction mode respected."""
    size = pool_size_for(settings.MAX_CONCURRENT_ANSWERS, settings.DATABASE_POOL_SIZE, settings.SHARD_PROCESSES)
    return create_engine(settings.DATABASE_URL, pool_size=size, pgbouncer=settings.DATABASE_PGBOUNCER)


def connections_warning(settings: Settings, max_connections: int) -> str | None:
    """One line when every process's pool at its fullest (kept + as many again in a burst,
    times SHARD_PROCESSES) could exceed the server's `max_connections`, naming what to change."""
    pool = pool_size_for(settings.MAX_CONCURRENT_ANSWERS, settings.DATABASE_POOL_SIZE, settings.SHARD_PROCESSES)
    processes = settings.SHARD_PROCESSES or 1
    total = 2 * pool * processes
    if total <= max_connections:
        return None
    return (f"Database connections: {processes} process(es) × (pool {pool} + {pool} in a burst) = {total} may "
            f"open, more than PostgreSQL's max_connections={max_connections}: lower DATABASE_POOL_SIZE (or "
            "SHARD_PROCESSES), raise max_connections, or put PgBouncer in front (DATABASE_PGBOUNCER=true).")


async def check_connections(engine: AsyncEngine, settings: Settings) -> str | None:
    """`connections_warning` against the server's own max_connections; None on SQLite and
    behind PgBouncer (whose pool, not the bot's, is what the server sees)."""
    if engine.dialect.name != "postgresql" or settings.DATABASE_PGBOUNCER:
        return None
    async with engine.connect() as conn:
        limit = int((await conn.exec_driver_sql("SHOW max_connections")).scalar_one())
    return connections_warning(settings, limit)


def _is_sqlite_file(url: URL) -> bool:
    return url.database not in (None, "", ":memory:") and "mode=memory" not in str(url)


def _pool_options(pool_size: int, overflow: int | None, timeout: float) -> dict[str, Any]:
    """Kept connections, burst connections and how long a turn waits for one (seconds)."""
    return {"pool_size": pool_size, "max_overflow": pool_size if overflow is None else overflow,
            "pool_timeout": timeout}


def _sqlite_engine(url: URL, pool: dict[str, Any]) -> AsyncEngine:
    file_db = _is_sqlite_file(url)
    if file_db:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)  # type: ignore[arg-type]
    # An in-memory database is one shared connection (StaticPool): no pool to size.
    engine = create_async_engine(url, **(pool if file_db else {}))

    @event.listens_for(engine.sync_engine, "connect")
    def _per_connection(dbapi_connection, _record) -> None:  # pragma: no cover - driver hook
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")  # SQLite ignores foreign keys unless asked
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if file_db:
            cursor.execute("PRAGMA journal_mode=WAL")  # persistent, but cheap to ask again
            cursor.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; WAL's usual pairing
        cursor.close()

    return engine


def pgbouncer_connect_args() -> dict[str, Any]:
    """What asyncpg and SQLAlchemy's asyncpg dialect need behind PgBouncer in transaction
    mode: no statement cache in either, and a statement name no other client reuses."""
    return {"statement_cache_size": 0, "prepared_statement_cache_size": 0,
            "prepared_statement_name_func": lambda: f"__asyncpg_{uuid.uuid4()}__"}


def create_engine(database_url: str, *, pool_size: int = DEFAULT_POOL_SIZE, max_overflow: int | None = None,
                  pool_timeout: float = POOL_TIMEOUT_SECONDS, pgbouncer: bool = False) -> AsyncEngine:
    """The engine for `database_url`, its pool keeping `pool_size` connections and
    opening `max_overflow` more in a burst (as many again when None; see above)."""
    url = make_url(database_url)
    pool = _pool_options(pool_size, max_overflow, pool_timeout)
    if url.drivername.startswith("sqlite"):
        return _sqlite_engine(url, pool)
    connect_args: dict[str, Any] = pgbouncer_connect_args() if pgbouncer else {}
    if "search_path" in url.query:
        connect_args["server_settings"] = {"search_path": str(url.query["search_path"])}
        url = url.difference_update_query(["search_path"])
    return create_async_engine(url, pool_pre_ping=True, connect_args=connect_args, **pool)


def session_factory(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


# ---- start-up failures an operator can cause, in one line --------------------------------


class SchemaMissingError(Exception):
    """The schema named by `?search_path=` does not exist and this login may not create it."""

    def __init__(self, schema: str, user: str) -> None:
        super().__init__(schema, user)
        self.schema, self.user = schema, user


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and everything it wraps (SQLAlchemy's `.orig`, causes and contexts), once each."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for inner in (getattr(current, "orig", None), current.__cause__, current.__context__):
            if isinstance(inner, BaseException):
                pending.append(inner)


def shown_url(database_url: str) -> str:
    """The URL without its password, safe for a log line."""
    return make_url(database_url).render_as_string(hide_password=True)


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return "the host name does not resolve"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (nothing listens there)"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return "a file stands where a folder is needed"
    return exc.strerror or str(exc) or type(exc).__name__


def _file_failure(exc: OSError, what: str) -> str:
    where = exc.filename or what
    return f"Cannot write {where} ({_os_reason(exc)}): {what}"


def describe_database_failure(exc: BaseException, database_url: str) -> str | None:
    """One line naming the cause and DATABASE_URL for a failure an operator can fix
    (no server, wrong database, login refused, missing schema, unwritable file); None for
    anything else, which is a bug and keeps its traceback."""
    import asyncpg.exceptions as pg

    url = make_url(database_url)
    shown = shown_url(database_url)
    fix_url = "fix DATABASE_URL (or the database)"
    for cause in exception_chain(exc):
        if isinstance(cause, SchemaMissingError):
            return (f"The schema {cause.schema!r} named by search_path in DATABASE_URL does not exist and "
                    f"{cause.user!r} may not create it: run CREATE SCHEMA \"{cause.schema}\" AUTHORIZATION "
                    f"\"{cause.user}\" as the database owner, or fix DATABASE_URL.")
        if isinstance(cause, pg.InvalidCatalogNameError):
            return f"The database in DATABASE_URL ({shown}) does not exist: create it, or {fix_url}."
        if isinstance(cause, (pg.InvalidPasswordError, pg.InvalidAuthorizationSpecificationError)):
            return f"PostgreSQL refused the login of DATABASE_URL ({shown}): {cause}. Check the user and password."
        if isinstance(cause, (pg.CannotConnectNowError, pg.TooManyConnectionsError)):
            return f"PostgreSQL at DATABASE_URL ({shown}) refuses connections now: {cause}."
        if isinstance(cause, pg.InvalidSchemaNameError) or "no schema has been selected" in str(cause):
            return (f"The schema named by search_path in DATABASE_URL ({shown}) does not exist: create it, "
                    f"or {fix_url}.")
        if isinstance(cause, sqlite3.OperationalError):
            text = str(cause)
            if any(part in text for part in ("unable to open", "readonly", "read-only", "disk I/O", "disk is full")):
                return (f"Cannot open the SQLite file {url.database} for writing ({text}): make it and its folder "
                        f"writable by this user, or set DATABASE_URL to another path.")
        if isinstance(cause, OSError):
            if cause.filename is not None or cause.errno in (errno.EACCES, errno.EROFS, errno.ENOSPC):
                return _file_failure(cause, "make the folder of DATABASE_URL writable by this user, "
                                            "or set DATABASE_URL to another path.")
            if url.drivername.startswith("postgresql"):
                return (f"Cannot reach PostgreSQL at {url.host or 'localhost'}:{url.port or 5432} "
                        f"({_os_reason(cause)}): start it, or fix DATABASE_URL ({shown}).")
    return None
