"""Batched bookkeeping writes on a real database: many writes in one transaction, writes
of one row added up while they wait, a run of usage writes in one statement, answers ending
together two statements in all however their writes interleave, a row the database refuses
loses only itself (counted), and `close` writes what is left."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from prometheus_client import REGISTRY
from sqlalchemy import event, func, select

from bot.db.engine import session_factory
from bot.db.models import EnvironmentKeyHealth, UsageDay
from bot.load.bookkeeping import AnswerWrite, KeyFailure, KeySuccess, UsageWrite
from bot.load.write_behind import WriteBehind
from bot.repo.common import ensure_server
from bot.repo.conversation import RecordedAnswer, answer_of
from bot.repo.keys import KeyRef
from bot.repo.usage import UsageAdd, UsageKey
from bot.usage.tokens import TokenCounts

COUNTS = TokenCounts(input_tokens=10, output_tokens=5, reasoning_tokens=2, cached_input_tokens=1, estimated=False)
DAY = date(2026, 12, 2)
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
KEY = KeyRef("environment", "fp-one")


def usage_errors() -> float:
    return REGISTRY.get_sample_value("database_errors_total", {"during": "usage"}) or 0.0


def usage(user: int | None, guild: int | None = None, counts: TokenCounts = COUNTS) -> UsageWrite:
    return UsageWrite(UsageAdd(UsageKey(guild, user, "openai", "gpt-x", "server", DAY), counts))  # type: ignore[arg-type]


def statements(engine) -> list[str]:
    """Every statement the engine sends from now on (an executemany counts once)."""
    seen: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute",
                 lambda _conn, _cursor, sql, *_rest: seen.append(sql.split()[0].upper()))
    return seen


async def test_a_refused_row_loses_only_itself_and_close_writes_the_rest(engine) -> None:
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)  # only `close` flushes here
    before = usage_errors()
    for user in range(5):
        writes.put(usage(100 + user))
    writes.put(usage(None))  # NOT NULL user_id: the database refuses it
    assert len(writes) == 6
    assert await writes.close() == 1
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(UsageDay)) == 5
    assert usage_errors() == before + 1
    assert len(writes) == 0


async def test_writes_of_one_row_add_up_while_they_wait(engine) -> None:
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)
    for i in range(100):
        writes.put(KeySuccess(KEY, NOW + timedelta(seconds=i)))
        writes.put(usage(7))
    assert len(writes) == 2  # one key's health, one day row
    sent = statements(engine)
    assert await writes.close() == 0
    assert sent == ["INSERT", "INSERT"]  # the key's health and the day row: one upsert each
    async with sessions() as session:
        health = await session.get(EnvironmentKeyHealth, KEY.ident)
        row = (await session.scalars(select(UsageDay))).one()
    assert health.successes == 100
    assert health.last_used_at.replace(tzinfo=UTC) == NOW + timedelta(seconds=99)
    assert (row.messages, row.input_tokens, row.output_tokens, row.reasoning_tokens, row.cached_input_tokens) == (
        100, 1000, 500, 200, 100)


async def test_a_run_of_usage_writes_is_one_statement_per_conflict_target(engine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await ensure_server(session, 1)
    writes = WriteBehind(sessions, interval=60)
    for user in range(50):
        writes.put(usage(user, guild=1))
        writes.put(usage(user))  # a DM: the other conflict target
    sent = statements(engine)
    assert await writes.close() == 0
    assert sent.count("INSERT") == 2
    async with sessions() as session:
        assert await session.scalar(select(func.sum(UsageDay.messages))) == 100
        assert await session.scalar(select(func.count()).select_from(UsageDay)) == 100


async def test_failures_never_add_up_and_keep_their_place(engine) -> None:
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)
    until = NOW + timedelta(minutes=5)
    writes.put(KeySuccess(KEY, NOW))
    writes.put(KeyFailure(KEY, "rate_limited", NOW + timedelta(seconds=1), until))
    writes.put(KeyFailure(KEY, "server_error", NOW + timedelta(seconds=2)))
    writes.put(KeySuccess(KEY, NOW + timedelta(seconds=3)))  # added to the first: written before the rest
    assert len(writes) == 3
    assert await writes.close() == 0
    async with sessions() as session:
        health = await session.get(EnvironmentKeyHealth, KEY.ident)
    assert (health.successes, health.errors, health.last_error_type) == (2, 2, "server_error")
    assert health.cooling_down_until.replace(tzinfo=UTC) == until  # the rest stands


async def test_writes_queued_during_an_outage_add_up_with_the_batch_put_back(engine) -> None:
    sessions = session_factory(engine)

    def database_away_once():
        """The first connection is refused, just as another answer ends."""
        if not refused:
            refused.append(True)
            writes.put(KeySuccess(KEY, NOW + timedelta(seconds=1)))
            raise ConnectionRefusedError("the database restarts")
        return sessions()

    refused: list[bool] = []
    writes = WriteBehind(database_away_once, interval=60)  # type: ignore[arg-type]
    writes.put(KeySuccess(KEY, NOW))
    assert await writes.flush() == 0  # nothing lost: kept for the next try
    assert refused and len(writes) == 1  # the two successes are one write again
    assert await writes.close() == 0
    async with sessions() as session:
        assert (await session.get(EnvironmentKeyHealth, KEY.ident)).successes == 2


async def test_answers_recorded_in_one_statement_each_part_leading_to_its_whole(engine) -> None:
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)
    answers = [RecordedAnswer(1000 + i, 7, tuple(2000 + 10 * i + part for part in range(1 + i % 3)))
               for i in range(30)]
    for answer in answers:
        writes.put(AnswerWrite(answer))
    writes.put(AnswerWrite(answers[0]))  # recorded twice (two shards): nothing changes
    sent = statements(engine)
    assert await writes.close() == 0
    assert sent.count("INSERT") == 1
    async with sessions() as session:
        for answer in answers:
            assert await answer_of(session, answer.message_ids[-1]) == answer


async def test_answers_ending_together_are_two_statements_whatever_the_interleaving(engine) -> None:
    """Each answer queues its parts, then its usage: written family by family, the batch is
    one statement of parts and one of usage, not two per answer."""
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)
    answers = [RecordedAnswer(5000 + i, 7, (6000 + i,)) for i in range(20)]
    for user, answer in enumerate(answers):
        writes.put(KeySuccess(KEY, NOW))
        writes.put(AnswerWrite(answer))
        writes.put(usage(user))
    sent = statements(engine)
    assert await writes.close() == 0
    assert sent == ["INSERT", "INSERT", "INSERT"]  # the key's health, the parts, the day rows
    async with sessions() as session:
        assert (await session.get(EnvironmentKeyHealth, KEY.ident)).successes == 20
        assert await session.scalar(select(func.sum(UsageDay.messages))) == 20
        for answer in answers:
            assert await answer_of(session, answer.message_ids[0]) == answer


async def test_a_success_after_a_failure_of_the_same_key_still_ends_its_rest(engine) -> None:
    """Writes of one family keep their order: the later success is written after the
    failure that set the rest, whatever other writes sit between them."""
    sessions = session_factory(engine)
    writes = WriteBehind(sessions, interval=60)
    other = KeyRef("environment", "fp-two")
    writes.put(KeySuccess(other, NOW))
    writes.put(usage(1))
    writes.put(KeyFailure(KEY, "rate_limited", NOW + timedelta(seconds=1), NOW + timedelta(minutes=5)))
    writes.put(usage(2))
    writes.put(KeySuccess(KEY, NOW + timedelta(seconds=2)))
    assert await writes.close() == 0
    async with sessions() as session:
        health = await session.get(EnvironmentKeyHealth, KEY.ident)
        assert (await session.get(EnvironmentKeyHealth, other.ident)).successes == 1
    assert (health.successes, health.errors) == (1, 1)
    assert health.cooling_down_until is None  # the success came last: the rest ended
