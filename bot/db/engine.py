"""Engine creation: the same code for the embedded SQLite file and PostgreSQL.

A PostgreSQL URL may end in `?search_path=<schema>` to keep the bot's tables in their own
schema of a shared database; asyncpg takes that only as a server setting, never as a URL
argument, so it is moved there.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine


def create_engine(database_url: str) -> AsyncEngine:
    url = make_url(database_url)
    if url.drivername.startswith("sqlite"):
        if url.database not in (None, "", ":memory:"):
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url)

        # SQLite ignores foreign keys unless asked, per connection.
        @event.listens_for(engine.sync_engine, "connect")
        def _foreign_keys_on(dbapi_connection, _record) -> None:  # pragma: no cover - driver hook
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    connect_args = {}
    if "search_path" in url.query:
        connect_args["server_settings"] = {"search_path": str(url.query["search_path"])}
        url = url.difference_update_query(["search_path"])
    return create_async_engine(url, pool_pre_ping=True, connect_args=connect_args)


def session_factory(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)
