"""Listen channels and the batch window on SQLite and PostgreSQL: defaults, bounds, the
per-server cap (also when two processes race for the last place), the read."""

from __future__ import annotations

import asyncio
import math

import pytest

from bot.capabilities.declared import OutOfBounds
from bot.capabilities.listening.settings import LISTENING
from bot.capabilities.listening.storage import (
    MAX_LISTEN_CHANNELS,
    listen_channels,
    remove_listen_channel,
    set_listen_channel,
)
from bot.db.engine import session_factory
from bot.question.settings import CONVERSATION
from bot.repo.capability_settings import read_values, set_values
from bot.repo.conversation import DEFAULT_BATCH_SECONDS

GUILD = 5151


async def batch_seconds(session, guild_id) -> float:
    return (await read_values(session, LISTENING, guild_id))["batch_seconds"]


async def test_the_batch_window_defaults_and_keeps_the_history_depth(sessions) -> None:
    async with sessions() as session, session.begin():
        assert await batch_seconds(session, GUILD) == DEFAULT_BATCH_SECONDS
        assert await batch_seconds(session, None) == DEFAULT_BATCH_SECONDS
        await set_values(session, GUILD, CONVERSATION, {"history": 7})
        assert (await set_values(session, GUILD, LISTENING, {"batch_seconds": 0.5}))["batch_seconds"] == 0.5
    async with sessions() as session:
        assert await batch_seconds(session, GUILD) == 0.5
        assert (await read_values(session, CONVERSATION, GUILD))["history"] == 7
    for bad in (-0.1, 10.01, math.nan, math.inf):
        with pytest.raises(OutOfBounds):
            async with sessions() as session, session.begin():
                await set_values(session, GUILD, LISTENING, {"batch_seconds": bad})


async def test_listen_channels_added_updated_capped_and_removed(sessions) -> None:
    async with sessions() as session, session.begin():
        assert await set_listen_channel(session, GUILD, 1) == "added"
        assert await set_listen_channel(session, GUILD, 1, 0) == "updated"
        for channel_id in range(2, MAX_LISTEN_CHANNELS + 1):
            assert await set_listen_channel(session, GUILD, channel_id, 300) == "added"
        assert await set_listen_channel(session, GUILD, 99) == "full"
        assert await set_listen_channel(session, GUILD, 2, 8) == "updated"  # a known one may still change
    async with sessions() as session:
        stored = await listen_channels(session, GUILD)
    assert len(stored) == MAX_LISTEN_CHANNELS and stored[1] == 0.0 and stored[2] == 8.0 and 99 not in stored
    async with sessions() as session, session.begin():
        assert await remove_listen_channel(session, GUILD, 1)
        assert not await remove_listen_channel(session, GUILD, 1)
        assert await listen_channels(session, GUILD + 1) == {}
    for bad in (-1, 300.5, math.nan):
        with pytest.raises(ValueError):
            async with sessions() as session, session.begin():
                await set_listen_channel(session, GUILD, 3, bad)


async def test_two_processes_racing_for_the_last_place_take_it_once(engine_factory) -> None:
    first, second = session_factory(engine_factory()), session_factory(engine_factory())
    async with first() as session, session.begin():
        for channel_id in range(1, MAX_LISTEN_CHANNELS):
            await set_listen_channel(session, GUILD, channel_id)

    async def take(sessions, channel_id: int) -> str:
        async with sessions() as session, session.begin():
            return await set_listen_channel(session, GUILD, channel_id)

    results = await asyncio.gather(take(first, 100), take(second, 200))
    assert sorted(results) == ["added", "full"]
    async with first() as session:
        assert len(await listen_channels(session, GUILD)) == MAX_LISTEN_CHANNELS
