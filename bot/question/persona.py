"""The system prompt of an answer: the persona the server's managers wrote (a channel's
replaces the server's), with a few names filled in, or a short built-in default.

Filling is a plain lookup of `{name}` for the known names only: a persona is user text,
so an unknown `{word}`, a lone brace or `{0}` stays exactly as typed (str.format would
raise on them, or reach into attributes).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import discord

log = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"\{([a-z]+)\}")
DEFAULT_PERSONA = ("You are {bot}, a helpful assistant chatting on Discord in the server {server}. "
                   "Today is {date}.")
DEFAULT_DM_PERSONA = "You are {bot}, a helpful assistant chatting on Discord in a direct message. Today is {date}."


@dataclass(frozen=True)
class PromptFacts:
    """Who and where: the names a persona may mention."""

    bot: str
    server: str | None
    channel: str
    user: str
    now: datetime

    def values(self) -> dict[str, str]:
        moment = self.now.astimezone(UTC)
        return {"bot": self.bot, "server": self.server or "", "channel": self.channel, "user": self.user,
                "date": moment.strftime("%Y-%m-%d"), "time": moment.strftime("%H:%M UTC")}


def fill(template: str, values: Mapping[str, str]) -> str:
    """`template` with each `{name}` of `values` replaced; anything else left as typed."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def system_prompt_for(persona: str | None, facts: PromptFacts) -> str:
    """The persona filled in, or the built-in default when the server wrote none."""
    if persona is None:
        persona = DEFAULT_PERSONA if facts.server is not None else DEFAULT_DM_PERSONA
    return fill(persona, facts.values())


def persona_channel_id(channel: object) -> int:
    """The channel whose persona applies: a thread uses its parent's."""
    if isinstance(channel, discord.Thread) and channel.parent_id is not None:
        return channel.parent_id
    return getattr(channel, "id", 0)


def facts_of(message: discord.Message, bot_name: str, asker: discord.abc.User) -> PromptFacts:
    channel = message.channel
    channel_name = getattr(channel, "name", None) or "direct message"
    server = message.guild.name if message.guild is not None else None
    return PromptFacts(bot_name, server, channel_name, asker.display_name, datetime.now(UTC))


def system_prompt(message: discord.Message, persona: str | None, bot_name: str,
                  asker: discord.abc.User | None = None) -> str:
    """The system prompt for answering `message` under the server's `persona` (None: the
    default); `asker`: who asks when not the message's author (a slash command)."""
    return system_prompt_for(persona, facts_of(message, bot_name, asker or message.author))
