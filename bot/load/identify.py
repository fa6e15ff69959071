"""Identify in turn across processes.

Discord lets a bot token start one session (IDENTIFY) per identify bucket every 5 seconds;
a shard's bucket is `shard_id % max_concurrency` (`max_concurrency` from `/gateway/bot`).
discord.py keeps that rule inside one process only (it sleeps 5 s before each identify but
the first), so processes started together identify at once and Discord refuses all but one.

On PostgreSQL the processes take turns: each identify opens its own connection and, in one
transaction, takes the bucket's advisory lock (`pg_advisory_xact_lock` on a fixed namespace
and the bucket), reads when any process last identified in that bucket (`identify_turns`,
by the database's clock, so machines' clocks never matter), waits until 5 s have passed,
records the time and commits, which releases the lock. A table rather than a lock held for
the 5 s after the identify: a process that dies right after identifying still leaves its
time behind, nothing has to outlive the hook to release the lock, and a transaction-scoped
lock also works behind PgBouncer in transaction mode.

A database that does not answer must not keep the bot from Discord: the whole turn is
bounded, and past the bound (or on any database error) one line is logged and discord.py's
own spacing applies instead. A SQLite file serves one process, so there discord.py's own
behaviour is kept (`LLMBot.before_identify_hook`).
"""

from __future__ import annotations

import asyncio
import logging

import discord
from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.db.models_processes import IdentifyTurn

log = logging.getLogger(__name__)

# Discord's rule: one IDENTIFY per bucket per 5 seconds.
IDENTIFY_SPACING_SECONDS = 5.0
# The time is recorded a commit's round trip before the IDENTIFY leaves; this covers it.
SEND_MARGIN_SECONDS = 0.1
# First key of the two-key advisory lock ("IDNT"); the bucket is the second.
LOCK_NAMESPACE = 0x49444E54
# Beyond the turns of the other processes, how long the database may take to answer.
DATABASE_SLACK_SECONDS = 10.0
# Never longer than this: discord.py gives a shard's first connection 180 s in all.
MAX_WAIT_SECONDS = 150.0
LIMITS_TIMEOUT_SECONDS = 10.0

_WAIT_SQL = text("SELECT GREATEST(0, :spacing - EXTRACT(EPOCH FROM clock_timestamp() - identified_at)) "
                 "FROM identify_turns WHERE bucket = :bucket")


class IdentifyGate:
    """Turns to identify, shared by every process on one PostgreSQL database.

    `processes` sizes the default bound (each other process may hold the bucket's turn
    once before this one); `spacing`, `bound` and `namespace` are for tests.
    """

    def __init__(self, engine: AsyncEngine, *, processes: int = 1, spacing: float = IDENTIFY_SPACING_SECONDS,
                 bound: float | None = None, namespace: int = LOCK_NAMESPACE) -> None:
        self._engine = engine
        self.spacing = spacing
        self.bound = bound if bound is not None else min(
            MAX_WAIT_SECONDS, (spacing + SEND_MARGIN_SECONDS) * (processes + 1) + DATABASE_SLACK_SECONDS)
        self._namespace = namespace
        self._warned = False  # one line per outage, not one per shard

    async def wait_turn(self, shard_id: int, *, max_concurrency: int = 1, initial: bool = False) -> None:
        """Return when shard `shard_id` may identify: its bucket's turn taken and recorded, or
        (the database out of reach within the bound) after discord.py's own spacing."""
        bucket = shard_id % max(1, max_concurrency)
        try:
            async with asyncio.timeout(self.bound):
                await self._take_turn(bucket)
        except Exception as exc:  # any failure falls back to discord.py's spacing
            reason = (f"no answer within {self.bound:g} s" if isinstance(exc, TimeoutError)
                      else " ".join(f"{type(exc).__name__}: {exc}".split())[:200])
            (log.debug if self._warned else log.warning)(
                "Shard %d identifies without its turn from the database (%s): discord.py's own %g s spacing "
                "instead; check DATABASE_URL", shard_id, reason, self.spacing)
            self._warned = True
            if not initial:
                await asyncio.sleep(self.spacing)
            return
        self._warned = False

    async def _take_turn(self, bucket: int) -> None:
        """Under the bucket's lock: wait out the last identify of any process, record this one."""
        async with self._engine.connect() as conn, conn.begin():
            await conn.execute(select(func.pg_advisory_xact_lock(self._namespace, bucket)))
            wait = await conn.scalar(_WAIT_SQL, {"spacing": self.spacing + SEND_MARGIN_SECONDS, "bucket": bucket})
            if wait:
                await asyncio.sleep(float(wait))
            now = insert(IdentifyTurn).values(bucket=bucket, identified_at=func.clock_timestamp())
            await conn.execute(now.on_conflict_do_update(index_elements=[IdentifyTurn.bucket],
                                                         set_={"identified_at": now.excluded.identified_at}))


async def read_max_concurrency(client: discord.AutoShardedClient) -> int:
    """`max_concurrency` from `/gateway/bot`, 1 when it cannot be read. discord.py 2.7.1 asks
    `/gateway/bot` in `launch_shards` only without a shard count, and drops its
    `session_start_limit` there; `fetch_session_start_limits` is its public way to it."""
    try:
        async with asyncio.timeout(LIMITS_TIMEOUT_SECONDS):
            limits = await client.fetch_session_start_limits()
        return max(1, int(limits.max_concurrency))
    except Exception as exc:  # one bucket is always safe
        log.debug("max_concurrency unread (%s): identifying one shard at a time", exc)
        return 1
