"""Bookkeeping writes (key health, usage) made off the answer's path, in batches.

An answer must never wait for, or fail on, the record of what it cost or how its key
did. Such writes are queued here and one task writes them every
DATABASE_WRITE_BATCH_MS, or sooner once `MAX_BATCH` are waiting, many per transaction
(on SQLite one short hold of the write lock instead of one per answer). While the
database is unreachable or busy the writes stay queued (bounded by `MAX_PENDING`) and
the outage is logged and counted once. A batch the database refuses is written again
one write per transaction, so one bad row loses only itself; a write that still fails
is logged and counted (`database_errors_total`), never raised. At shutdown `close`
writes what is left. The writes are upserts and increments, so
their order within a batch does not matter.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.metrics import DATABASE_ERRORS, database_error

log = logging.getLogger(__name__)

MAX_BATCH = 200  # writes per transaction; also wakes the writer early
MAX_PENDING = 100_000  # beyond this (a long outage) the oldest writes are dropped, counted

Write = Callable[[AsyncSession], Awaitable[None]]
# Words of a driver's error that say the database is not there or too busy, as opposed
# to refusing what was written (SQLite reports both as OperationalError).
UNAVAILABLE_WORDS = ("locked", "busy", "unable to open", "connect", "closed", "terminat", "timeout")


class Unavailable(Exception):
    """The database is not there or too busy: the batch waits for the next flush."""


def unavailable(exc: BaseException) -> bool:
    """No pooled connection in time, a refused or lost connection, "database is locked"."""
    if isinstance(exc, (PoolTimeout, OSError)):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, OperationalError) and any(w in str(exc.orig).lower() for w in UNAVAILABLE_WORDS)


@dataclass(frozen=True)
class Pending:
    write: Write
    what: str  # a closed label: "key_health" or "usage"


class WriteBehind:
    """Queued writes and the task that writes them (see the module docstring)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], interval: float) -> None:
        self._sessions = sessions
        self._interval = interval
        self._pending: deque[Pending] = deque()
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._outage = False

    def put(self, write: Write, what: str) -> None:
        """Queue `write` (a coroutine function of a session in a transaction)."""
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            database_error("write_dropped")
        self._pending.append(Pending(write, what))
        if len(self._pending) >= MAX_BATCH:
            self._wake.set()
        if self._task is None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="write-behind")

    def __len__(self) -> int:
        return len(self._pending)

    async def _run(self) -> None:
        while not self._closed:
            try:
                await asyncio.wait_for(self._wake.wait(), self._interval)
            except TimeoutError:
                pass
            self._wake.clear()
            await self.flush()

    async def flush(self) -> int:
        """Write everything queued now; how many writes failed for good. While the
        database is unreachable or busy the writes stay queued for the next flush."""
        failed = 0
        async with self._lock:
            while self._pending:
                batch = [self._pending.popleft() for _ in range(min(MAX_BATCH, len(self._pending)))]
                try:
                    failed += await self._write(batch)
                except Unavailable as exc:
                    self._pending.extendleft(reversed(batch))  # back at the front, in order
                    self._unavailable(exc.__cause__ or exc)
                    return failed
        if self._outage:
            log.info("batched writes reach the database again")
            self._outage = False
        return failed

    def _unavailable(self, exc: BaseException) -> None:
        if not self._outage:  # once per outage, not every flush
            database_error("write_delayed")
            log.error("the database cannot take batched writes (%s): %d kept for the next try",
                      type(exc).__name__, len(self._pending))
        self._outage = True

    async def _write(self, batch: list[Pending]) -> int:
        """The batch in one transaction; when a row is refused, each write alone."""
        try:
            async with self._sessions() as session, session.begin():
                for pending in batch:
                    await pending.write(session)
            return 0
        except Exception as exc:  # noqa: BLE001 - a refused row: retried one by one below
            if unavailable(exc):
                raise Unavailable from exc
            if len(batch) == 1:
                return self._failed(batch[0])
        return sum([await self._write([pending]) for pending in batch])

    @staticmethod
    def _failed(pending: Pending) -> int:
        database_error(pending.what)
        log.exception("a %s write failed and is lost", pending.what)
        return 1

    async def close(self) -> int:
        """Stop the task and write what is left; how many writes failed."""
        self._closed = True
        self._wake.set()
        if self._task is not None:  # it ends after its current flush: no batch is cut off
            await asyncio.gather(self._task, return_exceptions=True)
        failed = await self.flush()
        if self._pending:  # the database is still away: what is left cannot be kept
            DATABASE_ERRORS.labels("write_dropped").inc(len(self._pending))
            log.error("%d batched write(s) lost at shutdown: the database cannot be reached", len(self._pending))
            failed += len(self._pending)
            self._pending.clear()
        return failed
