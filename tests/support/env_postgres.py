"""PostgreSQL for tests: a throwaway schema on TEST_POSTGRES_URL, skipped with a reason
when it is unset (CI sets it when PostgreSQL answers on 127.0.0.1:5432)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.db.engine import create_engine

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL")
SKIP_REASON = "TEST_POSTGRES_URL is unset (CI sets it when PostgreSQL answers on 127.0.0.1:5432)"


@asynccontextmanager
async def postgres_schema() -> AsyncIterator[Callable[[], AsyncEngine]]:
    """Yield `make()`, which builds engines (one per simulated process) on a fresh schema."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_REASON)
    admin = create_engine(POSTGRES_URL)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    made: list[AsyncEngine] = []

    def make() -> AsyncEngine:
        # A server setting, not a SET in a "connect" hook: a SET runs inside the driver's
        # implicit transaction and is undone by the pool's rollback when a read-only
        # session returns the connection.
        made.append(create_async_engine(POSTGRES_URL, pool_pre_ping=True,
                                        connect_args={"server_settings": {"search_path": schema}}))
        return made[-1]

    try:
        yield make
    finally:
        for engine in made:
            await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
