"""Identify in turn across processes (`bot.load.identify`): gates on separate engines, as
separate processes would hold, on real PostgreSQL; and a database that does not answer."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from bot import migrate
from bot.load.identify import IDENTIFY_SPACING_SECONDS, IdentifyGate
from tests.support.env_postgres import postgres_schema


async def identify_together(shards: list[int], max_concurrency: int) -> list[float]:
    """Three processes' gates (each its own engine) asked at the same instant; when each may identify."""
    async with postgres_schema() as make:
        await migrate.upgrade(make())
        namespace = random.randrange(1, 2**31)  # apart from any other run on this database
        gates = [IdentifyGate(make(), processes=len(shards), namespace=namespace) for _ in shards]
        start = asyncio.Event()

        async def one(gate: IdentifyGate, shard: int) -> float:
            await start.wait()
            await gate.wait_turn(shard, max_concurrency=max_concurrency)
            return time.monotonic()

        tasks = [asyncio.create_task(one(gate, shard)) for gate, shard in zip(gates, shards, strict=True)]
        await asyncio.sleep(0)
        start.set()
        return sorted(await asyncio.gather(*tasks))


async def test_processes_identify_one_bucket_five_seconds_apart() -> None:
    times = await identify_together([0, 1, 2], max_concurrency=1)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert all(gap >= IDENTIFY_SPACING_SECONDS for gap in gaps), gaps
    assert times[-1] - times[0] < 3 * IDENTIFY_SPACING_SECONDS, gaps  # in turn, not one bound each


async def test_separate_buckets_identify_together() -> None:
    times = await identify_together([0, 1, 2], max_concurrency=3)
    assert times[-1] - times[0] < 1.0, times


@pytest.fixture
async def silent_database() -> AsyncIterator[str]:
    """A PostgreSQL address that accepts connections and never says a word."""
    held: list[asyncio.StreamWriter] = []

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}/bot"
    finally:
        for writer in held:
            writer.close()
        server.close()


async def test_a_database_that_does_not_answer_bounds_the_wait_in_one_line(silent_database, caplog) -> None:
    engine = create_async_engine(silent_database)
    gate = IdentifyGate(engine, spacing=0.2, bound=1.0)
    caplog.set_level(logging.DEBUG, logger="bot.load.identify")
    try:
        began = time.monotonic()
        await gate.wait_turn(3, max_concurrency=1)
        took = time.monotonic() - began
        await gate.wait_turn(4, max_concurrency=1)  # the same outage: no second warning
    finally:
        await engine.dispose()
    assert 1.0 <= took < 3.0, took  # the bound, then discord.py's own spacing
    warnings = [r for r in caplog.records if r.name == "bot.load.identify" and r.levelno >= logging.WARNING]
    [line] = [r.getMessage() for r in warnings]
    assert "Shard 3" in line and "no answer within 1 s" in line and "DATABASE_URL" in line, line
    assert "\n" not in line
