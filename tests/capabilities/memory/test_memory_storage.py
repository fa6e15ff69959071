"""Memory's storage on SQLite and PostgreSQL: a fact is cut at 500 characters, a member
keeps at most 100 (the oldest goes), list/forget/clear act on what applies where they
run, a server keeps at most 20 facts, and every write stamps its scope so another
process's cached copy goes at its next poll. `MemoryData` exports and erases it all."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.capabilities.memory.member_data import MemoryData
from bot.capabilities.memory.storage import (
    MAX_MEMORIES,
    MAX_SERVER_FACTS,
    add_memory,
    add_server_fact,
    clear_memories,
    member_memories,
    memories_in,
    remove_memory,
    remove_server_fact,
    server_facts_of,
    set_memory,
)
from bot.db.models_memory import FACT_LENGTH, Memory
from bot.load.config_cache import ConfigCache
from bot.repo.personal import members_with_settings
from bot.settings import load_settings
from tests.support.check_database_work import counted

ALICE, BOB, HERE, THERE = 11, 12, 4242, 4343


def cache_on(engine_factory) -> ConfigCache:
    return ConfigCache(engine_factory(), load_settings(_env_file=None))


async def test_a_long_fact_is_cut_and_the_oldest_goes_past_the_bound(engine_factory):
    cache = cache_on(engine_factory)
    async with cache.sessions() as session, session.begin():
        await set_memory(session, ALICE, True)
        cut = await add_memory(session, ALICE, HERE, "x" * (FACT_LENGTH + 20))
        for n in range(MAX_MEMORIES - 1):
            await add_memory(session, ALICE, HERE, f"fact {n}")
        full = await add_memory(session, BOB, HERE, "bob's own")
        over = await add_memory(session, ALICE, None, "the newest")
    assert (cut.cut, len(cut.fact), cut.dropped) == (True, FACT_LENGTH, 0)
    assert (full.cut, full.dropped) == (False, 0)
    assert over.dropped == 1
    async with cache.sessions() as session:
        kept = await member_memories(session, ALICE)
        assert len(kept.memories) == MAX_MEMORIES
        assert kept.memories[0].fact == "fact 0" and kept.memories[-1].fact == "the newest"  # the cut one went
        assert [m.fact for m in (await member_memories(session, BOB)).memories] == []  # Bob never opted in
        assert await session.scalar(select(func.count()).select_from(Memory).where(Memory.user_id == BOB)) == 1


async def test_list_forget_and_clear_act_on_what_applies_where_they_run(engine_factory):
    cache = cache_on(engine_factory)
    async with cache.sessions() as session, session.begin():
        await set_memory(session, ALICE, True)
        for guild, fact in ((HERE, "here 1"), (THERE, "there 1"), (None, "dm 1"), (HERE, "here 2")):
            await add_memory(session, ALICE, guild, fact)
        await add_memory(session, BOB, HERE, "bob here")
    async with cache.sessions() as session, session.begin():
        assert [m.fact for m in await memories_in(session, ALICE, HERE)] == ["here 1", "here 2"]
        assert [m.fact for m in await memories_in(session, ALICE, None)] == ["here 1", "there 1", "dm 1", "here 2"]
        assert await remove_memory(session, ALICE, HERE, 3) is None  # only two apply here
        gone = await remove_memory(session, ALICE, HERE, 2)
        assert gone is not None and gone.fact == "here 2"
        assert await clear_memories(session, ALICE, THERE) == 1
        assert [m.fact for m in await memories_in(session, ALICE, None)] == ["here 1", "dm 1"]
        assert await clear_memories(session, ALICE, None) == 2  # a DM: all of them
        assert [m.fact for m in await memories_in(session, BOB, HERE)] == ["bob here"]  # never another's
        kept = await member_memories(session, ALICE)
    assert kept.enabled and kept.memories == ()  # clearing keeps the switch


async def test_recalled_in_a_server_is_what_was_saved_there_and_in_a_dm_everything(engine_factory):
    cache = cache_on(engine_factory)
    async with cache.sessions() as session, session.begin():
        await set_memory(session, ALICE, True)
        for guild, fact in ((HERE, "here"), (THERE, "there"), (None, "dm")):
            await add_memory(session, ALICE, guild, fact)
        kept = await member_memories(session, ALICE)
    assert [m.fact for m in kept.recalled_in(HERE)] == ["here"]
    assert [m.fact for m in kept.recalled_in(None)] == ["here", "there", "dm"]


async def test_server_facts_are_bounded_and_removed_by_number(engine_factory):
    cache = cache_on(engine_factory)
    async with cache.sessions() as session, session.begin():
        for n in range(MAX_SERVER_FACTS):
            assert await add_server_fact(session, HERE, f"fact {n}", ALICE)
        assert not await add_server_fact(session, HERE, "one too many", ALICE)
        assert await remove_server_fact(session, HERE, MAX_SERVER_FACTS + 1) is None
        assert await remove_server_fact(session, HERE, 1) == "fact 0"
        assert await add_server_fact(session, HERE, "in its place", ALICE)
        facts = await server_facts_of(session, HERE)
    assert len(facts) == MAX_SERVER_FACTS and facts[-1] == "in its place" and facts[0] == "fact 1"


async def test_a_fact_is_kept_on_one_line_without_control_characters(engine_factory):
    cache = cache_on(engine_factory)
    async with cache.sessions() as session, session.begin():
        saved = await add_memory(session, ALICE, None, "likes\x00 tea\n\n- and\tcoffee ")
        kept = await memories_in(session, ALICE, None)
    assert saved.fact == kept[0].fact == "likes tea - and coffee"


async def test_opted_in_members_count_as_members_with_settings_and_writes_reach_other_processes(engine_factory):
    engine = engine_factory()
    here, there = ConfigCache(engine, load_settings(_env_file=None)), cache_on(engine_factory)
    async with there.sessions() as session, session.begin():
        await set_memory(session, ALICE, True)
        await add_memory(session, ALICE, HERE, "likes tea")
        assert await members_with_settings(session) == {ALICE}
    await here.poll()
    with counted(engine) as work:
        assert [m.fact for m in (await here.memories(ALICE)).memories] == ["likes tea"]
        assert (await here.memories(BOB)).enabled is False  # no settings of his own: no read
        await here.memories(ALICE)  # kept
    assert len(work.statements) == 1, work.statements
    await there.poll()
    async with there.sessions() as session, session.begin():
        await add_memory(session, ALICE, HERE, "and coffee")
    assert [m.fact for m in (await here.memories(ALICE)).memories] == ["likes tea"]  # not polled yet
    await here.poll()
    assert [m.fact for m in (await here.memories(ALICE)).memories] == ["likes tea", "and coffee"]


async def test_member_data_exports_the_switch_and_memories_and_erases_both(engine_factory):
    here, there = cache_on(engine_factory), cache_on(engine_factory)
    async with here.sessions() as session, session.begin():
        await set_memory(session, ALICE, True)
        await add_memory(session, ALICE, HERE, "likes tea")
        await add_memory(session, ALICE, None, "said in a DM")
        await add_memory(session, BOB, HERE, "bob's")
    await there.poll()
    assert len((await there.memories(ALICE)).memories) == 2
    data = MemoryData()
    async with here.sessions() as session, session.begin():
        exported = await data.export(session, ALICE)
        assert await data.export(session, 99) == []
    assert exported[0]["memory"] == "on"
    assert [(row["fact"], row["server_id"]) for row in exported[1:]] == [("likes tea", str(HERE)),
                                                                        ("said in a DM", None)]
    async with here.sessions() as session, session.begin():
        assert await data.erase(session, ALICE) == 3  # two memories and the switch
    async with here.sessions() as session:
        assert await data.export(session, ALICE) == []
        assert await session.scalar(select(func.count()).select_from(Memory)) == 1  # Bob's stays
    await there.poll()
    assert (await there.memories(ALICE)).memories == ()  # the stamp reached the other process
