"""Whether the bot answers a message that addresses it: where (the server's channel mode
and channel rules), for whom (blocked members and roles, required roles) and DMs.

`decide` is pure: message facts and stored settings in, a `Decision` out. `AdmissionGate`
reads the server's settings (cached: `bot.config_cache`) once per message, applies the decision and says a refusal
at most once an hour per member. A message that is not answered never reaches a
provider, and where the bot does not answer it shows nothing at all (no typing).
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import discord
from sqlalchemy.exc import SQLAlchemyError

from bot.discord_sink import DiscordMessageSink
from bot.error_embed import locale_for_message
from bot.repo.controls import GuildControls
from providers.i18n import t
from stream.sink import SinkError

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)

REFUSAL_INTERVAL = 3600.0  # a refused member hears why at most this often (seconds)
MAX_REMEMBERED = 10_000  # throttle entries kept before old ones are dropped
REFUSAL_KEYS = {
    "blocked": "chat.access_blocked",
    "role_required": "chat.access_role_required",
    "dms_off": "chat.dms_off",
}


@dataclass(frozen=True)
class MessageFacts:
    """What admission needs to know about one message and its author."""

    guild_id: int | None
    channel_id: int
    parent_id: int | None  # the channel a thread belongs to
    member_id: int
    role_ids: frozenset[int]
    manager: bool  # holds Manage Server


@dataclass(frozen=True)
class Decision:
    action: Literal["answer", "ignore", "refuse"]
    reason: str | None = None


ANSWER = Decision("answer")
IGNORE = Decision("ignore")


def channel_admits(facts: MessageFacts, controls: GuildControls) -> bool:
    """A denied channel (or a thread under one) never; in allowlist mode only allowed
    channels and the threads under them."""
    places = {facts.channel_id} | ({facts.parent_id} if facts.parent_id is not None else set())
    if places & controls.denied:
        return False
    return controls.mode != "allowlist" or bool(places & controls.allowed)


def decide(facts: MessageFacts, controls: GuildControls | None, *, allow_dms: bool) -> Decision:
    """Answer, ignore (say nothing) or refuse (say why) — managers are never refused."""
    if facts.guild_id is None:
        return ANSWER if allow_dms else Decision("refuse", "dms_off")
    if controls is None:
        return ANSWER
    if not channel_admits(facts, controls):
        return IGNORE
    if facts.manager:
        return ANSWER
    if facts.member_id in controls.blocked_members or facts.role_ids & controls.blocked_roles:
        return Decision("refuse", "blocked")
    if controls.required_roles and not facts.role_ids & controls.required_roles:
        return Decision("refuse", "role_required")
    return ANSWER


def facts_of(message: discord.Message) -> MessageFacts:
    author = message.author
    channel = message.channel
    parent_id = channel.parent_id if isinstance(channel, discord.Thread) else None
    member = isinstance(author, discord.Member)
    roles = frozenset(role.id for role in author.roles) if member else frozenset()
    manager = member and author.guild_permissions.manage_guild
    guild_id = message.guild.id if message.guild is not None else None
    return MessageFacts(guild_id, channel.id, parent_id, author.id, roles, manager)


class RefusalThrottle:
    """When each member last heard a refusal, per server.

    Kept in this process's memory on purpose: it only spares a channel from repeated
    lines, so another shard process saying it once more is harmless, and a restart
    forgetting it costs one line.
    """

    def __init__(self, interval: float = REFUSAL_INTERVAL) -> None:
        self.interval = interval
        self._last: dict[tuple[int | None, int], float] = {}

    def allows(self, guild_id: int | None, member_id: int, now: float | None = None) -> bool:
        """True (and remembered) when this member may be told again now."""
        now = time.monotonic() if now is None else now
        key = (guild_id, member_id)
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            return False
        if len(self._last) >= MAX_REMEMBERED:
            self._last = {k: v for k, v in self._last.items() if now - v < self.interval}
        self._last[key] = now
        return True


class AdmissionGate:
    """The chat cog asks `admits(message)` before anything else happens for a message."""

    def __init__(self, bot: LLMBot) -> None:
        self.bot = bot
        self.throttle = RefusalThrottle()

    async def admits(self, message: discord.Message) -> bool:
        facts = facts_of(message)
        controls = await self._controls(facts.guild_id)
        decision = decide(facts, controls, allow_dms=self.bot.settings.ALLOW_DMS)
        if decision.action == "refuse" and decision.reason is not None:
            if decision.reason == "dms_off" or self.throttle.allows(facts.guild_id, facts.member_id):
                await self._say(message, REFUSAL_KEYS[decision.reason])
        return decision.action == "answer"

    async def _controls(self, guild_id: int | None) -> GuildControls | None:
        """The server's settings, from the configuration cache. When the database cannot
        be read the message goes on to the turn, which answers from what it can or tells
        the member (logged and counted there, once per message)."""
        if guild_id is None or self.bot.sessions is None:
            return None
        try:
            return (await self.bot.config.server(guild_id)).controls
        except (SQLAlchemyError, OSError) as exc:
            log.debug("server %s settings unreadable (%s); the turn decides", guild_id, type(exc).__name__)
            return None

    @staticmethod
    async def _say(message: discord.Message, key: str) -> None:
        with contextlib.suppress(SinkError):
            await DiscordMessageSink(message.channel, reply_to=message).send(t(key, locale_for_message(message)),
                                                                             reply=True)
