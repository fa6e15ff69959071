"""Counting the database work the bot does: connections checked out of the pool and SQL
statements sent, with SQLAlchemy's own engine events (nothing is mocked)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


@dataclass
class DatabaseWork:
    """What one engine did while counted: checkouts (sessions that touched the database)
    and statements, each kept so a failing assertion can show them."""

    checkouts: int = 0
    statements: list[str] = field(default_factory=list)

    def reads_and_writes(self) -> tuple[int, int]:
        writes = sum(1 for s in self.statements if s.lstrip().split(" ", 1)[0].upper()
                     in ("INSERT", "UPDATE", "DELETE"))
        return len(self.statements) - writes, writes


@contextlib.contextmanager
def counted(engine: AsyncEngine) -> Iterator[DatabaseWork]:
    """Count `engine`'s pool checkouts and statements until the block ends."""
    work = DatabaseWork()
    sync = engine.sync_engine

    def on_checkout(*_args) -> None:
        work.checkouts += 1

    def on_statement(_conn, _cursor, statement, *_args) -> None:
        work.statements.append(" ".join(statement.split())[:160])

    event.listen(sync.pool, "checkout", on_checkout)
    event.listen(sync, "before_cursor_execute", on_statement)
    try:
        yield work
    finally:
        event.remove(sync.pool, "checkout", on_checkout)
        event.remove(sync, "before_cursor_execute", on_statement)
