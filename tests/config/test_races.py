"""Shard processes writing the same configuration at the same moment.

Each engine stands for one bot process; every write runs in its own transaction, as a
slash command does. The database, not a check in Python, must keep one row per thing,
and the loser of a race gets a RepositoryError the commands can answer, never an
IntegrityError.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from bot import repo
from bot.db.engine import session_factory
from bot.db.models import (
    ModelFallback,
    PersonalConfig,
    ServerApiKey,
    ServerCapabilities,
    ServerTextConfig,
)
from bot.repo import RepositoryError

G1 = 111
ALICE = 1001


async def _two_processes(engine_factory):
    """Two "processes" on a database where the server row already exists (the usual case:
    racing on its first creation would serialize the writers by accident)."""
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    async with first() as s, s.begin():
        await repo.ensure_server(s, G1)
    return first, second


async def _outcomes(calls) -> list[object]:
    """Run every call at once; each result is a value or the RepositoryError code."""
    async def one(call):
        try:
            return await call()
        except RepositoryError as error:
            return error.code

    return await asyncio.gather(*(one(call) for call in calls))


async def _count(sessions, model) -> int:
    async with sessions() as s:
        return await s.scalar(select(func.count()).select_from(model))


def _in_transaction(sessions, fn):
    async def call():
        async with sessions() as s, s.begin():
            return await fn(s)
    return call


async def test_thirty_concurrent_adds_of_one_key_store_it_once(engine_factory, vault):
    processes = await _two_processes(engine_factory)
    calls = [_in_transaction(processes[n % 2],
                             lambda s: repo.add_server_key(s, vault, G1, "openai", "sk-same-key-0123456789"))
             for n in range(30)]
    outcomes = await _outcomes(calls)
    stored = [o for o in outcomes if isinstance(o, repo.KeyInfo)]
    assert len(stored) == 1
    assert sorted(o for o in outcomes if isinstance(o, str)) == ["key_duplicate"] * 29
    assert await _count(processes[0], ServerApiKey) == 1


async def test_concurrent_adds_of_different_keys_respect_the_pool_limit(engine_factory, vault):
    processes = await _two_processes(engine_factory)
    calls = [_in_transaction(processes[n % 2],
                             lambda s, n=n: repo.add_server_key(s, vault, G1, "openai", f"sk-distinct-key-{n:04d}"))
             for n in range(30)]
    outcomes = await _outcomes(calls)
    assert sum(isinstance(o, repo.KeyInfo) for o in outcomes) == repo.keys.MAX_POOL_SIZE
    assert [o for o in outcomes if isinstance(o, str)] == ["pool_full"] * (30 - repo.keys.MAX_POOL_SIZE)
    async with processes[0]() as s:
        labels = [k.label for k in await repo.list_server_keys(s, G1)]
    assert len(set(labels)) == repo.keys.MAX_POOL_SIZE


async def test_two_concurrent_fallback_adds_store_one_row(engine_factory):
    first, second = await _two_processes(engine_factory)
    outcomes = await _outcomes([
        _in_transaction(first, lambda s: repo.add_fallback(s, G1, "openrouter", "model-x")),
        _in_transaction(second, lambda s: repo.add_fallback(s, G1, "openrouter", "model-x")),
    ])
    assert sorted(outcomes, key=str) == [1, "fallback_duplicate"]
    assert await _count(first, ModelFallback) == 1


async def test_concurrent_fallback_adds_of_different_models_all_get_a_place(engine_factory):
    first, second = await _two_processes(engine_factory)
    outcomes = await _outcomes([
        _in_transaction((first, second)[n % 2], lambda s, n=n: repo.add_fallback(s, G1, "google", f"g-{n}"))
        for n in range(6)
    ])
    assert sorted(outcomes) == [1, 2, 3, 4, 5, 6]
    async with first() as s:
        positions = list(await s.scalars(select(ModelFallback.position).order_by(ModelFallback.position)))
    assert positions == [1, 2, 3, 4, 5, 6]


async def test_concurrent_first_writes_of_personal_and_server_rows(engine_factory, vault):
    """The first write of a row that does not exist yet, from two processes at once."""
    first, second = await _two_processes(engine_factory)
    writes = [
        lambda s: repo.set_personal_key(s, vault, ALICE, G1, "sk-alice-server-4444"),
        lambda s: repo.set_personal_model(s, ALICE, G1, "openai", "gpt-a"),
        lambda s: repo.set_personal_key(s, vault, ALICE, None, "sk-alice-global-5555"),
        lambda s: repo.set_personal_model(s, ALICE, None, "openai", "gpt-g"),
        lambda s: repo.set_text_model(s, G1, "anthropic", "claude-x"),
        lambda s: repo.set_verbatim_tool_calling(s, G1, True),
        lambda s: repo.set_thought_log_channel(s, G1, 555),
    ]
    calls = [_in_transaction(sessions, write) for write in writes for sessions in (first, second)]
    outcomes = await _outcomes(calls)
    assert not [o for o in outcomes if isinstance(o, str)]
    assert await _count(first, PersonalConfig) == 2
    assert await _count(first, ServerTextConfig) == 1
    assert await _count(first, ServerCapabilities) == 1
    async with first() as s:
        mine = await repo.get_personal(s, ALICE, G1)
        settings = await repo.get_server_settings(s, G1)
    assert (mine.provider, mine.model, mine.masked_key) == ("openai", "gpt-a", "\u20264444")
    assert (settings.model, settings.verbatim_tool_calling_enabled, settings.thought_log_channel_id) == (
        "claude-x", True, 555)


async def test_concurrent_removes_keep_the_chain_consistent(engine_factory):
    first, second = await _two_processes(engine_factory)
    async with first() as s, s.begin():
        for model in ("a", "b", "c", "d"):
            await repo.add_fallback(s, G1, "google", model)
    outcomes = await _outcomes([
        _in_transaction(first, lambda s: repo.remove_fallback(s, G1, 1)),
        _in_transaction(second, lambda s: repo.remove_fallback(s, G1, 1)),
    ])
    assert not [o for o in outcomes if isinstance(o, str)]
    async with first() as s:
        chain = await repo.list_fallbacks(s, G1)
        positions = list(await s.scalars(select(ModelFallback.position).order_by(ModelFallback.position)))
    assert [t.model for t in chain] == ["c", "d"] and positions == [1, 2]


async def test_a_writer_without_the_lock_still_cannot_store_a_key_twice(engine_factory, vault):
    """A shard still running an older version inserts without taking the server lock: the
    unique fingerprint alone must refuse the second copy, as a clean duplicate."""
    first, second = await _two_processes(engine_factory)
    secret = "sk-raced-by-an-old-shard-9999"
    async with first() as old_shard:
        await old_shard.begin()
        old_shard.add(ServerApiKey(guild_id=G1, provider="openai", label="old", last4="9999",
                                   encrypted_key=vault.encrypt(secret),
                                   key_fingerprint=vault.key_fingerprint(secret)))
        await old_shard.flush()  # inserted, not yet committed
        add = asyncio.create_task(_outcomes([
            _in_transaction(second, lambda s: repo.add_server_key(s, vault, G1, "openai", secret))]))
        await asyncio.sleep(0.5)  # the add reads the pool and reaches its insert meanwhile
        await old_shard.commit()
    assert await add == ["key_duplicate"]
    assert await _count(first, ServerApiKey) == 1
