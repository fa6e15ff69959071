"""Helpers every repository module needs: the server row, its lock, input checks, UTC
timestamps, and turning a constraint the database enforced into a RepositoryError."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Server

P = ParamSpec("P")
R = TypeVar("R")


class RepositoryError(Exception):
    """Bad input refused, or a write that lost a race; `code` picks the localized message.
    Nothing was stored: the caller's transaction rolls back."""

    def __init__(self, code: str, **params: object) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite hands timestamps back naive; every one we store is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def has_control(value: str) -> bool:
    """Control characters (NUL, escape, newline...): PostgreSQL refuses NUL in text
    outright, and none belongs in a key, label, model name or address."""
    return any(unicodedata.category(c) == "Cc" for c in value)


def refuse_control(value: str) -> str:
    if has_control(value):
        raise RepositoryError("control_characters")
    return value


def printable(value: str) -> str:
    """User input echoed back in a message, with control characters made visible."""
    return "".join("?" if unicodedata.category(c) == "Cc" else c for c in value)


def insert_for(session: AsyncSession, table):
    """An INSERT that can say ON CONFLICT DO NOTHING on both supported databases."""
    dialect = session.get_bind().dialect.name
    return (pg_insert if dialect == "postgresql" else sqlite_insert)(table)


_STATEMENTS: dict[tuple[str, Hashable], Any] = {}


def kept_statement(session: AsyncSession, name: Hashable, build: Callable[[AsyncSession], Any]) -> Any:
    """The statement `build` makes for this session's database, built once per dialect and
    reused with new parameters: the bookkeeping writes run several times a second per
    process, and building an upsert (and its cache key) anew each time cost more than
    sending it."""
    key = (session.get_bind().dialect.name, name)
    stmt = _STATEMENTS.get(key)
    if stmt is None:
        stmt = _STATEMENTS[key] = build(session)
    return stmt


async def ensure_server(session: AsyncSession, guild_id: int) -> None:
    """Create the server row if missing; safe when two shard processes race."""
    stmt = insert_for(session, Server).values(guild_id=guild_id)
    await session.execute(stmt.on_conflict_do_nothing(index_elements=["guild_id"]))


async def lock_server(session: AsyncSession, guild_id: int) -> None:
    """Serialize this server's configuration writes until the transaction ends, so a
    count or position read next is still true when the row is inserted.

    PostgreSQL: a row lock on the server row (FOR NO KEY UPDATE, which other rows'
    foreign-key checks do not wait for). SQLite: the upsert in ensure_server already
    took the database's single write lock.
    """
    await ensure_server(session, guild_id)
    await session.execute(
        select(Server.guild_id).where(Server.guild_id == guild_id).with_for_update(key_share=True)
    )


def conflicts_as(code: str) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Any constraint the database still enforces (a race no check above could see)
    reaches the caller as RepositoryError(code), never as an IntegrityError."""
    def wrap(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(fn)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await fn(*args, **kwargs)
            except IntegrityError:
                raise RepositoryError(code) from None
        return guarded
    return wrap
