"""Helpers every repository module needs: the server row and UTC timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Server


class RepositoryError(Exception):
    """Bad input refused before anything was stored; `code` picks the localized message."""

    def __init__(self, code: str, **params: object) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite hands timestamps back naive; every one we store is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def insert_for(session: AsyncSession, table):
    """An INSERT that can say ON CONFLICT DO NOTHING on both supported databases."""
    dialect = session.get_bind().dialect.name
    return (pg_insert if dialect == "postgresql" else sqlite_insert)(table)


async def ensure_server(session: AsyncSession, guild_id: int) -> None:
    """Create the server row if missing; safe when two shard processes race."""
    stmt = insert_for(session, Server).values(guild_id=guild_id)
    await session.execute(stmt.on_conflict_do_nothing(index_elements=["guild_id"]))
