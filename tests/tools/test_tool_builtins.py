"""The shipped tools' behaviour: time zones, dice bounds and parsing, channel history."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

import discord
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.tools.builtin import (
    CONTENT_LIMIT,
    CurrentTimeArgs,
    RecentMessagesArgs,
    RollDiceArgs,
    current_time,
    recent_channel_messages,
    roll_dice,
)
from bot.tools.dice import MAX_DICE, MAX_SIDES, DiceSpec, parse_notation
from bot.tools.registry import ToolContext, ToolError
from tests.support.drive_discord_client import fake_discord, fast_ready_kwargs, running_bot  # noqa: F401
from tests.support.fake_discord_server import FakeDiscord

FIXED = datetime(2026, 3, 1, 12, 30, 5, tzinfo=UTC)


async def test_current_time_in_a_fixed_zone() -> None:
    tokyo = await current_time(CurrentTimeArgs(timezone="Asia/Tokyo"), ToolContext(), now=FIXED)
    assert tokyo == {"timezone": "Asia/Tokyo", "iso": "2026-03-01T21:30:05+09:00",
                     "weekday": "Sunday", "utc_offset": "+0900"}
    utc = await current_time(CurrentTimeArgs(), ToolContext(), now=FIXED)
    assert utc["iso"] == "2026-03-01T12:30:05+00:00"


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../etc/passwd", ""])
async def test_current_time_bad_zone_is_a_tool_error(zone: str) -> None:
    with pytest.raises(ToolError, match="time zone"):
        await current_time(CurrentTimeArgs(timezone=zone), ToolContext(), now=FIXED)


@pytest.mark.parametrize(("notation", "spec"), [
    ("2d6+1", DiceSpec(2, 6, 1)), ("d20", DiceSpec(1, 20, 0)), (" 4 D 8 - 2 ", DiceSpec(4, 8, -2)),
    (f"{MAX_DICE}d{MAX_SIDES}", DiceSpec(MAX_DICE, MAX_SIDES, 0)),
])
def test_dice_notation_parses(notation: str, spec: DiceSpec) -> None:
    assert parse_notation(notation) == spec


@pytest.mark.parametrize("notation", ["", "2x6", "0d6", f"{MAX_DICE + 1}d6", "1d1",
                                      f"1d{MAX_SIDES + 1}", "1d6+100000", "d", "2d6+", "1d6; rm"])
def test_dice_notation_out_of_bounds_or_malformed(notation: str) -> None:
    with pytest.raises(ValueError):
        parse_notation(notation)


async def test_roll_dice_bad_notation_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="count"):
        await roll_dice(RollDiceArgs(notation="500d6"), ToolContext())


@settings(max_examples=200, deadline=None)
@given(count=st.integers(1, MAX_DICE), sides=st.integers(2, MAX_SIDES),
       modifier=st.integers(-50, 50), seed=st.integers(0, 2**32))
async def test_roll_dice_stays_in_range(count: int, sides: int, modifier: int, seed: int) -> None:
    sign = "+" if modifier >= 0 else "-"
    out = await roll_dice(RollDiceArgs(notation=f"{count}d{sides}{sign}{abs(modifier)}"),
                          ToolContext(), rng=random.Random(seed))
    assert len(out["rolls"]) == count and all(1 <= r <= sides for r in out["rolls"])
    assert out["total"] == sum(out["rolls"]) + modifier and out["modifier"] == modifier


async def test_roll_dice_default_rng_is_the_system_one() -> None:
    from bot.tools import builtin

    assert isinstance(builtin._RNG, random.SystemRandom)
    out = await roll_dice(RollDiceArgs(notation="3d4"), ToolContext())
    assert 3 <= out["total"] <= 12


async def test_recent_messages_without_a_channel() -> None:
    with pytest.raises(ToolError, match="no channel"):
        await recent_channel_messages(RecentMessagesArgs(), ToolContext())


def test_recent_messages_count_is_bounded() -> None:
    with pytest.raises(ValueError):
        RecentMessagesArgs(count=21)
    with pytest.raises(ValueError):
        RecentMessagesArgs(count=0)


async def test_recent_messages_reads_only_the_current_channel(fake_discord: FakeDiscord) -> None:  # noqa: F811
    fake = fake_discord
    intents = discord.Intents.default()
    intents.message_content = True
    client = discord.Client(intents=intents, **fast_ready_kwargs())
    async with running_bot(fake, client):
        await fake.send_user_message("secret elsewhere", channel_id=fake.thought_channel_id)
        for i in range(23):
            await fake.send_user_message(f"message {i}")
        asking = asyncio.ensure_future(client.wait_for("message", check=lambda m: m.content.startswith("xxx")))
        await fake.send_user_message("x" * (CONTENT_LIMIT + 50))
        asker = (await asking).author  # a Member, as the chat cog gets it
        channel = client.get_channel(int(fake.channel_id))
        out = await recent_channel_messages(RecentMessagesArgs(count=3), ToolContext(channel, asker))
        assert out == {"messages": [
            {"author": "Alice", "content": "message 21"}, {"author": "Alice", "content": "message 22"},
            {"author": "Alice", "content": "x" * (CONTENT_LIMIT - 1) + "…"}]}
        full = await recent_channel_messages(RecentMessagesArgs(count=20), ToolContext(channel, asker))
        contents = [m["content"] for m in full["messages"]]
        assert len(contents) == 20 and contents[0] == "message 4"
        assert "secret elsewhere" not in contents
        fake.fail("GET", rf"/channels/{fake.channel_id}/messages", 403, code=50001, message="Missing Access")
        with pytest.raises(ToolError, match="cannot read"):
            await recent_channel_messages(RecentMessagesArgs(), ToolContext(channel, asker))


READ_MESSAGE_HISTORY = 1 << 16


async def test_recent_messages_need_the_askers_own_history_permission(fake_discord: FakeDiscord) -> None:  # noqa: F811
    fake = fake_discord
    fake.channel_overwrites[fake.channel_id] = [
        {"id": fake.member_user["id"], "type": 1, "allow": "0", "deny": str(READ_MESSAGE_HISTORY)}]
    intents = discord.Intents.default()
    intents.message_content = True
    client = discord.Client(intents=intents, **fast_ready_kwargs())
    async with running_bot(fake, client):
        said = asyncio.ensure_future(client.wait_for("message", check=lambda m: m.author.id == int(fake.owner["id"])))
        await fake.send_user_message("said before alice could see", author=fake.owner)
        owner = (await said).author
        asked = asyncio.ensure_future(client.wait_for("message", check=lambda m: m.content == "what was said?"))
        await fake.send_user_message("what was said?")
        alice = (await asked).author
        channel = client.get_channel(int(fake.channel_id))
        assert isinstance(alice, discord.Member) and isinstance(owner, discord.Member)
        with pytest.raises(ToolError, match="may not read this channel's message history"):
            await recent_channel_messages(RecentMessagesArgs(), ToolContext(channel, alice))
        with pytest.raises(ToolError, match="may not read"):  # no member to check: refused too
            await recent_channel_messages(RecentMessagesArgs(), ToolContext(channel))
        allowed = await recent_channel_messages(RecentMessagesArgs(count=2), ToolContext(channel, owner))
        assert allowed["messages"][0]["content"] == "said before alice could see"
