"""Bookkeeping writes (key health, usage) made off the answer's path, in batches.

An answer must never wait for, or fail on, the record of what it cost or how its key
did. Such writes are queued here and one task writes them every
DATABASE_WRITE_BATCH_MS, or sooner once `MAX_BATCH` are waiting, many per transaction
(on SQLite one short hold of the write lock instead of one per answer). Writes that add
to the same row add up while they wait (a hundred answers with one key are one update),
and a run of writes of one kind goes in one go (`Bookkeeping.write_all`). An answer queues
its parts and then its usage, so answers ending together interleave the two; the batch is
written family by family (`what`: the rows a write touches), which makes each its own run:
two statements per batch instead of two per answer. While the
database is unreachable or busy the writes stay queued (bounded by `MAX_PENDING`) and
the outage is logged and counted once. A batch the database refuses is written again
one write per transaction, so one bad row loses only itself; a write that still fails
is logged and counted (`database_errors_total`), never raised. At shutdown `close`
writes what is left. The writes of one family go in the order they were first queued, the
families in the order of their first write (they touch different tables).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Sequence
from itertools import count, groupby, islice
from typing import ClassVar, Protocol, Self

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.load.metrics import DATABASE_ERRORS, database_error

log = logging.getLogger(__name__)

MAX_BATCH = 200  # writes per transaction; also wakes the writer early
MAX_PENDING = 100_000  # beyond this (a long outage) the oldest writes are dropped, counted

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


class Bookkeeping(Protocol):
    """One queued write. Two with the same `merge_key` (None: never) add up into one
    (`plus`); `write_all` writes several of one kind in the session's transaction."""

    what: ClassVar[str]  # a closed label for metrics and logs: "key_health", "usage", "answer"

    @property
    def merge_key(self) -> Hashable | None: ...

    def plus(self, other: Self) -> Self: ...

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[Self]) -> None: ...


def by_family(batch: Sequence[Bookkeeping]) -> list[Bookkeeping]:
    """The batch family after family (`what`), each in its queue order, the families in the
    order of their first write: writes of one family may touch the same rows (a key's
    success and its failure), writes of two never do."""
    families: dict[str, list[Bookkeeping]] = {}
    for item in batch:
        families.setdefault(item.what, []).append(item)
    return [item for family in families.values() for item in family]


def _add(pending: dict[Hashable, Bookkeeping], key: Hashable, item: Bookkeeping) -> None:
    """`item` into `pending`: added up with the write waiting under `key`, else queued last."""
    kept = pending.get(key)
    pending[key] = kept.plus(item) if kept is not None else item


class WriteBehind:
    """Queued writes and the task that writes them (see the module docstring)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], interval: float) -> None:
        self._sessions = sessions
        self._interval = interval
        # In the order first queued; a write that adds up with a waiting one takes its place.
        self._pending: dict[Hashable, Bookkeeping] = {}
        self._ids = count()
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._outage = False

    def put(self, item: Bookkeeping) -> None:
        """Queue `item`, added to a waiting write of the same row when there is one."""
        merge_key = item.merge_key
        key = (type(item), merge_key) if merge_key is not None else next(self._ids)
        if key in self._pending:
            _add(self._pending, key, item)
            return
        if len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]
            database_error("write_dropped")
        self._pending[key] = item
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
                keys = list(islice(self._pending, MAX_BATCH))
                batch = {key: self._pending.pop(key) for key in keys}
                try:
                    failed += await self._write(list(batch.values()))
                except Unavailable as exc:
                    self._put_back(batch)
                    self._unavailable(exc.__cause__ or exc)
                    return failed
        if self._outage:
            log.info("batched writes reach the database again")
            self._outage = False
        return failed

    def _put_back(self, batch: dict[Hashable, Bookkeeping]) -> None:
        """The batch back at the front, in order; writes queued meanwhile add up with it."""
        later, self._pending = self._pending, batch
        for key, item in later.items():
            _add(self._pending, key, item)

    def _unavailable(self, exc: BaseException) -> None:
        if not self._outage:  # once per outage, not every flush
            database_error("write_delayed")
            log.error("the database cannot take batched writes (%s): %d kept for the next try",
                      type(exc).__name__, len(self._pending))
        self._outage = True

    async def _write(self, batch: list[Bookkeeping]) -> int:
        """The batch in one transaction, family by family, each run of one kind in one go;
        when a row is refused, each write alone."""
        try:
            async with self._sessions() as session, session.begin():
                for kind, run in groupby(by_family(batch), key=type):
                    await kind.write_all(session, list(run))
            return 0
        except Exception as exc:  # noqa: BLE001 - a refused row: retried one by one below
            if unavailable(exc):
                raise Unavailable from exc
            if len(batch) == 1:
                return self._failed(batch[0])
        return sum([await self._write([item]) for item in batch])

    @staticmethod
    def _failed(item: Bookkeeping) -> int:
        database_error(item.what)
        log.exception("a %s write failed and is lost", item.what)
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
