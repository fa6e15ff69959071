"""Whether the bot answers a message that addresses it: where (the server's channel mode
and channel rules), for whom (blocked members and roles, required roles) and DMs.

`decide` is pure: message facts and stored settings in, a `Decision` out; the question
brings the server's settings from its one configuration read. A refusal is said at most
once an hour per member and topic (`RefusalThrottle`). A message that is not answered
never reaches a provider, and where the bot does not answer it shows nothing at all (no
typing).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import discord

from bot.repo.controls import GuildControls

if TYPE_CHECKING:
    from bot.question.context import Question

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
    category_id: int | None = None  # the category of the channel (of a thread's channel)


@dataclass(frozen=True)
class Decision:
    action: Literal["answer", "ignore", "refuse"]
    reason: str | None = None


ANSWER = Decision("answer")
IGNORE = Decision("ignore")


def channel_admits(facts: MessageFacts, controls: GuildControls) -> bool:
    """A denied channel or category (or a thread under one) never; in allowlist mode only
    allowed channels and categories, and what is under them."""
    places = {facts.channel_id} | {place for place in (facts.parent_id, facts.category_id) if place is not None}
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


def facts_of(question: Question) -> MessageFacts:
    author = question.asker
    member = isinstance(author, discord.Member)
    roles = frozenset(role.id for role in author.roles) if member else frozenset()
    manager = member and author.guild_permissions.manage_guild
    where = question.where
    return MessageFacts(where.guild_id, where.channel_id, where.parent_id, author.id, roles, manager,
                        where.category_id)


def decide_question(question: Question, allow_dms: bool) -> Decision:
    """The decision for a question, from its configuration read (a server whose settings
    are not known is answered: the database policy decides about it before)."""
    server = question.config.server
    return decide(facts_of(question), server.controls if server is not None else None, allow_dms=allow_dms)


class RefusalThrottle:
    """When each member last heard a refusal, per server.

    Kept in this process's memory on purpose: it only spares a channel from repeated
    lines, so another shard process saying it once more is harmless, and a restart
    forgetting it costs one line.
    """

    def __init__(self, interval: float = REFUSAL_INTERVAL) -> None:
        self.interval = interval
        self._last: dict[tuple[int | None, int, str], float] = {}

    def allows(self, guild_id: int | None, member_id: int, now: float | None = None, topic: str = "access") -> bool:
        """True (and remembered) when this member may be told about `topic` again now."""
        now = time.monotonic() if now is None else now
        key = (guild_id, member_id, topic)
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            return False
        if len(self._last) >= MAX_REMEMBERED:
            self._last = {k: v for k, v in self._last.items() if now - v < self.interval}
        self._last[key] = now
        return True
