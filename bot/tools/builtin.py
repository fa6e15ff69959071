"""The shipped tools: current time, dice and the current channel's recent messages (web
search's tool is its capability's: `bot.capabilities.web_search.tool`).

All are read-only and safe: no network beyond the Discord channel the question was asked
in, no filesystem, bounded output.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import discord
from pydantic import BaseModel, Field

from bot.tools.dice import parse_notation, roll
from bot.tools.registry import Tool, ToolContext, ToolError, ToolRegistry

MAX_HISTORY = 20
CONTENT_LIMIT = 500  # characters of each message the model gets


class CurrentTimeArgs(BaseModel):
    timezone: str = Field("UTC", description="IANA time zone name, e.g. 'Asia/Tokyo'.")


class RollDiceArgs(BaseModel):
    notation: str = Field(..., description="Dice notation NdS[+-M], e.g. '2d6+1' or 'd20'.")


class RecentMessagesArgs(BaseModel):
    count: int = Field(10, ge=1, le=MAX_HISTORY, description="How many recent messages (1-20).")


async def current_time(args: CurrentTimeArgs, context: ToolContext, *, now: datetime | None = None) -> dict[str, Any]:
    """The current date and time in `args.timezone`."""
    try:
        zone = ZoneInfo(args.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ToolError(f"unknown time zone {args.timezone!r}; use an IANA name like 'Europe/Paris'") from exc
    moment = (now or datetime.now(UTC)).astimezone(zone)
    return {"timezone": args.timezone, "iso": moment.isoformat(timespec="seconds"),
            "weekday": moment.strftime("%A"), "utc_offset": moment.strftime("%z")}


_RNG = random.SystemRandom()


async def roll_dice(args: RollDiceArgs, context: ToolContext, *, rng: random.Random = _RNG) -> dict[str, Any]:
    """Roll dice with the system's secure RNG."""
    try:
        spec = parse_notation(args.notation)
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    return {"notation": args.notation, **roll(spec, rng)}


def asker_may_read_history(context: ToolContext) -> bool:
    """The asking member may view the channel and read its history (always in a DM)."""
    channel, asker = context.channel, context.asker
    if getattr(channel, "guild", None) is None:
        return True
    if not isinstance(asker, discord.Member):
        return False  # a server channel but no member to check: refuse rather than lend the bot's rights
    allowed = channel.permissions_for(asker)
    return allowed.view_channel and allowed.read_message_history


async def recent_channel_messages(args: RecentMessagesArgs, context: ToolContext) -> dict[str, Any]:
    """The last messages of the channel the question came from (oldest first), only when
    the asking member could read them there themselves."""
    channel = context.channel
    if channel is None:
        raise ToolError("no channel is available in this conversation")
    if not asker_may_read_history(context):
        raise ToolError("the member who asked may not read this channel's message history, "
                        "so its messages cannot be used")
    try:
        found = [m async for m in channel.history(limit=args.count)]
    except discord.Forbidden as exc:
        raise ToolError("the bot cannot read this channel's history") from exc
    except discord.HTTPException as exc:
        raise ToolError(f"reading the channel failed (HTTP {exc.status})") from exc
    found.reverse()
    return {"messages": [{"author": m.author.display_name, "content": _trim(m.content)} for m in found]}


def _trim(text: str) -> str:
    return text if len(text) <= CONTENT_LIMIT else text[: CONTENT_LIMIT - 1] + "…"


def default_registry(*extra: Tool) -> ToolRegistry:
    """The tools every chat turn offers, and `extra` ones a capability adds (web search's)."""
    return ToolRegistry([
        Tool("current_time", "Current date and time, optionally in an IANA time zone.",
             CurrentTimeArgs, current_time),
        Tool("roll_dice", "Roll dice given in NdS+M notation and return each die and the total.",
             RollDiceArgs, roll_dice),
        Tool("recent_channel_messages",
             "Read the most recent messages (up to 20) of the current Discord channel.",
             RecentMessagesArgs, recent_channel_messages),
        *extra,
    ])
