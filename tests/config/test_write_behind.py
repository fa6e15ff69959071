"""Batched bookkeeping writes on a real database: many writes in one transaction, a row
the database refuses loses only itself (counted), and `close` writes what is left."""

from __future__ import annotations

from datetime import date

from prometheus_client import REGISTRY
from sqlalchemy import func, select

from bot.db.engine import session_factory
from bot.db.models import UsageDay
from bot.repo.usage import UsageKey, add_usage
from bot.usage.tokens import TokenCounts
from bot.write_behind import WriteBehind

COUNTS = TokenCounts(input_tokens=10, output_tokens=5, reasoning_tokens=0, cached_input_tokens=0, estimated=False)


def usage_errors() -> float:
    return REGISTRY.get_sample_value("database_errors_total", {"during": "usage"}) or 0.0


async def test_a_refused_row_loses_only_itself_and_close_writes_the_rest(engine) -> None:
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)  # only `close` flushes here
    before = usage_errors()
    for user in range(5):
        key = UsageKey(None, 100 + user, "openai", "gpt-x", "server", date(2026, 12, 2))
        writes.put(lambda session, key=key: add_usage(session, key, COUNTS), "usage")
    refused = UsageKey(None, None, "openai", "gpt-x", "server", date(2026, 12, 2))  # type: ignore[arg-type]
    writes.put(lambda session: add_usage(session, refused, COUNTS), "usage")  # NOT NULL user_id
    assert len(writes) == 6
    assert await writes.close() == 1
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(UsageDay)) == 5
    assert usage_errors() == before + 1
    assert len(writes) == 0
