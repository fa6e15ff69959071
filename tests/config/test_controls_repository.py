"""Personas, channel rules and access rules in the database (SQLite, and PostgreSQL when
TEST_POSTGRES_URL is set): upserts instead of duplicates, scopes kept apart, bad text refused."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from bot.db.engine import session_factory
from bot.db.models import AccessRule, Persona
from bot.repo import RepositoryError
from bot.repo.controls import (
    GuildControls,
    add_access_rule,
    clear_persona,
    count_channel_personas,
    get_persona,
    read_controls,
    remove_access_rule,
    set_channel_mode,
    set_channel_rule,
    set_persona,
)

GUILD, OTHER_GUILD, CHANNEL, OTHER_CHANNEL = 10, 20, 111, 222


async def test_server_and_channel_personas_are_separate_and_replaced_in_place(sessions):
    async with sessions() as session, session.begin():
        await set_persona(session, GUILD, None, "Server voice.")
        await set_persona(session, GUILD, CHANNEL, "Channel voice.")
        await set_persona(session, GUILD, None, "Server voice, edited.\r\nSecond line.")
        await set_persona(session, OTHER_GUILD, None, "Elsewhere.")
    async with sessions() as session:
        server = await get_persona(session, GUILD, None)
        channel = await get_persona(session, GUILD, CHANNEL)
        rows = await session.scalar(select(func.count()).select_from(Persona))
        per_channel = await count_channel_personas(session, GUILD)
    assert (server, channel) == ("Server voice, edited.\nSecond line.", "Channel voice.")
    assert (rows, per_channel) == (3, 1)
    async with sessions() as session, session.begin():
        assert await clear_persona(session, GUILD, CHANNEL) is True
        assert await clear_persona(session, GUILD, CHANNEL) is False
        assert await get_persona(session, GUILD, None) == "Server voice, edited.\nSecond line."


@pytest.mark.parametrize(("body", "code"), [
    ("x" * 4001, "persona_too_long"), ("nul\x00", "persona_control_characters"),
    ("escape \x1b[31m", "persona_control_characters"), ("   \n\t ", "persona_empty"),
])
async def test_bad_personas_are_refused_before_anything_is_written(sessions, body, code):
    with pytest.raises(RepositoryError) as refused:
        async with sessions() as session, session.begin():
            await set_persona(session, GUILD, None, body)
    async with sessions() as session:
        rows = await session.scalar(select(func.count()).select_from(Persona))
    assert (refused.value.code, rows) == (code, 0)


async def test_a_persona_of_exactly_the_limit_is_kept(sessions):
    async with sessions() as session, session.begin():
        stored = await set_persona(session, GUILD, None, "y" * 4000)
    assert len(stored) == 4000


async def test_rules_are_one_per_target_and_read_together(sessions):
    async with sessions() as session, session.begin():
        await set_channel_mode(session, GUILD, "allowlist")
        await set_channel_rule(session, GUILD, CHANNEL, "deny")
        await set_channel_rule(session, GUILD, CHANNEL, "allow")  # replaces the deny
        await set_channel_rule(session, GUILD, OTHER_CHANNEL, "deny")
        assert await add_access_rule(session, GUILD, 5, "block_member") is True
        assert await add_access_rule(session, GUILD, 5, "block_member") is False
        await add_access_rule(session, GUILD, 6, "block_role")
        await add_access_rule(session, GUILD, 7, "require_role")
        await add_access_rule(session, OTHER_GUILD, 8, "require_role")
    async with sessions() as session:
        controls = await read_controls(session, GUILD)
        untouched = await read_controls(session, 30)
    assert controls == GuildControls("allowlist", frozenset({CHANNEL}), frozenset({OTHER_CHANNEL}),
                                     frozenset({5}), frozenset({6}), frozenset({7}))
    assert untouched == GuildControls()
    async with sessions() as session, session.begin():
        assert await remove_access_rule(session, GUILD, 7, ("block_member",)) is False
        assert await remove_access_rule(session, GUILD, 7, ("require_role",)) is True
        await set_channel_mode(session, GUILD, "everywhere")
    async with sessions() as session:
        assert (await read_controls(session, GUILD)).required_roles == frozenset()
        assert (await read_controls(session, GUILD)).mode == "everywhere"


async def test_two_processes_adding_the_same_rule_store_it_once(engine_factory):
    """Each engine stands for one shard process; the unique constraint and ON CONFLICT
    keep a double click or two shards from failing or duplicating."""
    makers = [session_factory(engine_factory()) for _ in range(4)]

    async def add(sessions) -> None:
        async with sessions() as session, session.begin():
            await add_access_rule(session, GUILD, 42, "block_member")
            await set_persona(session, GUILD, None, "Same.")

    await asyncio.gather(*(add(s) for s in makers))
    async with makers[0]() as session:
        rules = await session.scalar(select(func.count()).select_from(AccessRule))
        personas = await session.scalar(select(func.count()).select_from(Persona))
    assert (rules, personas) == (1, 1)
