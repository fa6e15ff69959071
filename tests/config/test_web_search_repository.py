"""Web search on the database itself (SQLite, and PostgreSQL when TEST_POSTGRES_URL is
set): the server's switch and its bound, what the configuration read sees of it, the
daily search limit shared by two processes, and searches in the usage day rows."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bot.capabilities.web_search.counting import SearchesWrite, searches_counted
from bot.db.engine import session_factory
from bot.db.models import SearchDay, ServerCapabilities, UsageDay
from bot.load.config_cache import ConfigCache
from bot.repo.common import RepositoryError
from bot.repo.usage import (
    MAX_SEARCHES_PER_DAY,
    Limits,
    Price,
    UsageAdd,
    UsageKey,
    add_usages,
    get_limits,
    prices_of,
    set_limits,
    set_price,
    usage_by,
)
from bot.repo.web_search import WebSearchSetting, get_web_search, set_web_search
from bot.settings import load_settings
from bot.usage.limits import may_search, search_limit, searches_left
from bot.usage.tokens import TokenCounts, counts_for
from providers.types import ChatRequest, Message, Usage

GUILD, OTHER_GUILD, ALICE, BOB = 7001, 7002, 8001, 8002
NOW = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
DAY = NOW.date()
TWO_A_DAY = Limits(searches_per_day=2)


async def test_the_switch_is_off_until_set_and_keeps_its_number(sessions):
    async with sessions() as session:
        assert await get_web_search(session, GUILD) == WebSearchSetting(False, 3)
        assert await get_web_search(session, None) == WebSearchSetting(False, 3)  # a DM: the operator's
    async with sessions() as session, session.begin():
        assert await set_web_search(session, GUILD, True, 7) == WebSearchSetting(True, 7)
    async with sessions() as session, session.begin():
        assert await set_web_search(session, GUILD, False) == WebSearchSetting(False, 7)  # number kept
    async with sessions() as session, session.begin():
        assert await set_web_search(session, GUILD, True) == WebSearchSetting(True, 7)
    async with sessions() as session:
        row = await session.get(ServerCapabilities, GUILD)
    assert (row.web_search_enabled, row.max_searches, row.verbatim_tool_calling_enabled) == (True, 7, False)


@pytest.mark.parametrize("bad", [0, 11, -1])
async def test_a_number_out_of_bounds_is_the_callers_bug_and_stores_nothing(sessions, bad):
    with pytest.raises(ValueError):
        async with sessions() as session, session.begin():
            await set_web_search(session, GUILD, True, bad)
    async with sessions() as session:
        assert await session.get(ServerCapabilities, GUILD) is None


async def test_the_configuration_read_sees_the_switch_here_at_once_and_there_after_its_poll(engine_factory):
    settings = load_settings(_env_file=None)
    here, there = ConfigCache(engine_factory(), settings), ConfigCache(engine_factory(), settings)
    for cache in (here, there):
        await cache.poll()
    before = await there.server(GUILD)
    assert (before.web_search, before.max_searches) == (False, 3)
    dm = await here.server(None)
    assert (dm.web_search, dm.max_searches) == (False, 3)
    async with here.sessions() as session, session.begin():
        await set_web_search(session, GUILD, True, 5)
    assert ((await here.server(GUILD)).web_search, (await here.server(GUILD)).max_searches) == (True, 5)
    assert (await there.server(GUILD)).web_search is False  # its copy, until it polls
    assert await there.poll() == 1
    assert ((await there.server(GUILD)).web_search, (await there.server(GUILD)).max_searches) == (True, 5)
    async with here.sessions() as session, session.begin():
        await set_limits(session, GUILD, searches_per_day=4)
    assert (await here.server(GUILD)).limits.searches_per_day == 4


async def test_searches_per_day_is_stored_kept_removed_and_bounded(sessions):
    async with sessions() as session, session.begin():
        stored = await set_limits(session, GUILD, messages_per_hour=5, searches_per_day=20)
    assert (stored.messages_per_hour, stored.searches_per_day) == (5, 20)
    async with sessions() as session, session.begin():
        stored = await set_limits(session, GUILD, tokens_per_day=100)  # others untouched
    assert (stored.searches_per_day, stored.tokens_per_day) == (20, 100)
    for bad in (-1, MAX_SEARCHES_PER_DAY + 1):
        with pytest.raises(RepositoryError, match="bad_limit"):
            async with sessions() as session, session.begin():
                await set_limits(session, GUILD, searches_per_day=bad)
    async with sessions() as session, session.begin():
        stored = await set_limits(session, GUILD, searches_per_day=0)  # 0 removes
    async with sessions() as session:
        assert stored == await get_limits(session, GUILD)
    assert stored.searches_per_day is None and stored.messages_per_hour == 5


def test_only_searches_the_server_pays_for_in_a_server_are_limited():
    assert search_limit(GUILD, TWO_A_DAY, "server") == 2
    assert search_limit(GUILD, TWO_A_DAY, "environment") == 2  # the operator's default, in the server
    assert search_limit(GUILD, TWO_A_DAY, "personal") is None  # a member's own key: never
    assert search_limit(None, TWO_A_DAY, "server") is None  # server rules do not reach DMs
    assert search_limit(GUILD, Limits(), "server") is None


async def test_each_search_is_taken_until_the_day_is_full_then_plain_false(sessions):
    asks = [await may_search(sessions, GUILD, ALICE, TWO_A_DAY, "server", NOW) for _ in range(3)]
    assert asks == [True, True, False]
    assert await searches_left(sessions, GUILD, ALICE, TWO_A_DAY, "server", NOW) == 0
    # another member, another server, the member's own key, a DM and the next day are their own
    assert await may_search(sessions, GUILD, BOB, TWO_A_DAY, "server", NOW)
    assert await may_search(sessions, OTHER_GUILD, ALICE, TWO_A_DAY, "server", NOW)
    assert all([await may_search(sessions, GUILD, ALICE, TWO_A_DAY, "personal", NOW) for _ in range(5)])
    assert await may_search(sessions, None, ALICE, TWO_A_DAY, "server", NOW)
    tomorrow = NOW.replace(day=NOW.day + 1)
    assert await may_search(sessions, GUILD, ALICE, TWO_A_DAY, "server", tomorrow)
    async with sessions() as session:
        rows = {(r.guild_id, r.user_id, r.day.day): r.searches
                for r in (await session.scalars(select(SearchDay))).all()}
    assert rows == {(GUILD, ALICE, 4): 2, (GUILD, BOB, 4): 1, (OTHER_GUILD, ALICE, 4): 1, (GUILD, ALICE, 5): 1}


async def count_searches(sessions, guild_id, user_id, limits, source, count, now):
    """What the answer's books queue, written as the batched writes write it."""
    write = searches_counted(guild_id, user_id, limits, source, count, now)
    if write is not None:
        async with sessions() as session, session.begin():
            await SearchesWrite.write_all(session, [write])


async def test_without_a_limit_nothing_is_counted_or_read(sessions):
    assert await may_search(sessions, GUILD, ALICE, Limits(), "server", NOW)
    assert await may_search(None, GUILD, ALICE, TWO_A_DAY, "server", NOW)  # no database: no limit
    assert await searches_left(sessions, GUILD, ALICE, Limits(), "server", NOW) is None
    await count_searches(sessions, GUILD, ALICE, Limits(), "server", 3, NOW)
    async with sessions() as session:
        assert (await session.scalars(select(SearchDay))).all() == []


async def test_native_searches_are_counted_after_the_fact_and_cap_the_next_request(sessions):
    limits = Limits(searches_per_day=5)
    assert await searches_left(sessions, GUILD, ALICE, limits, "server", NOW) == 5
    await count_searches(sessions, GUILD, ALICE, limits, "server", 4, NOW)
    assert await searches_left(sessions, GUILD, ALICE, limits, "server", NOW) == 1
    await count_searches(sessions, GUILD, ALICE, limits, "server", 3, NOW)  # ran: counted past the limit
    assert await searches_left(sessions, GUILD, ALICE, limits, "server", NOW) == 0
    assert not await may_search(sessions, GUILD, ALICE, limits, "server", NOW)
    await count_searches(sessions, GUILD, ALICE, limits, "personal", 3, NOW)  # own key: not counted
    assert await searches_left(sessions, GUILD, ALICE, limits, "personal", NOW) is None


async def test_two_processes_never_both_take_the_last_search(engine_factory):
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    limits = Limits(searches_per_day=3)
    taken = await asyncio.gather(*[may_search(sessions, GUILD, ALICE, limits, "server", NOW)
                                   for sessions in (first, second) * 4])
    assert sorted(taken) == [False] * 5 + [True] * 3


async def test_usage_rows_add_searches_and_report_them_per_model(sessions):
    key = UsageKey(GUILD, ALICE, "openai", "gpt-s", "server", DAY)
    other = UsageKey(GUILD, BOB, "openai", "gpt-t", "server", DAY)
    async with sessions() as session, session.begin():
        await add_usages(session, [UsageAdd(key, TokenCounts(10, 5, searches=2)), UsageAdd(other, TokenCounts(1, 1))])
        await add_usages(session, [UsageAdd(key, TokenCounts(10, 5, searches=1)),
                                   UsageAdd(key, TokenCounts(3, 3))])  # a field never reported adds nothing
        await add_usages(session, [UsageAdd(UsageKey(None, ALICE, "openai", "gpt-s", "server", DAY),
                                            TokenCounts(1, 1, searches=4))])
    async with sessions() as session:
        rows = {(r.guild_id, r.model): r.searches for r in (await session.scalars(select(UsageDay))).all()}
        per_model = {t.label: t.searches for t in await usage_by(session, DAY, guild_id=GUILD)}
        mine = await usage_by(session, DAY, user_id=ALICE, by="all")
    assert rows == {(GUILD, "gpt-s"): 3, (GUILD, "gpt-t"): 0, (None, "gpt-s"): 4}
    assert per_model == {("openai", "gpt-s"): 3, ("openai", "gpt-t"): 0}
    assert [t.searches for t in mine] == [7]


async def test_a_search_price_is_optional_and_kept_when_left_out(sessions):
    async with sessions() as session, session.begin():
        await set_price(session, GUILD, "gpt-s", 1.0, 2.0)
        await set_price(session, GUILD, "gpt-t", 1.0, 2.0, per_1000_searches=10.0)
    async with sessions() as session, session.begin():
        await set_price(session, GUILD, "gpt-t", 3.0, 4.0)  # no search price given: kept
    async with sessions() as session:
        prices = await prices_of(session, GUILD)
    assert prices == {"gpt-s": Price(1.0, 2.0, None), "gpt-t": Price(3.0, 4.0, 10.0)}
    with pytest.raises(RepositoryError, match="bad_price"):
        async with sessions() as session, session.begin():
            await set_price(session, GUILD, "gpt-t", 3.0, 4.0, per_1000_searches=-1.0)


def test_estimated_counts_keep_the_searches_the_provider_reported():
    request = ChatRequest(messages=[Message(role="user", content="x" * 40)])
    counts = counts_for(Usage(searches=2), request, "y" * 8)
    assert (counts.estimated, counts.searches, counts.input_tokens, counts.output_tokens) == (True, 2, 10, 2)
    assert counts_for(None, request, "y").searches is None
