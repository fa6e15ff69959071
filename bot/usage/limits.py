"""The limits of whoever pays, checked when a question is admitted, before anything is
shown or fetched for it.

Limits protect what the server and the operator pay for: the server's keys and the
operator's environment default. An answer paid by the member's own key is counted in
usage but never limited. A question is counted where the server (or the operator)
starts to pay, in every scope that limits it: at admission when the server's leg comes
first (so a refused question has no side effect at all), else when the turn reaches the
server's fallback behind the member's own key (`bot.turn.runner`). No path reaches the
server's keys uncounted, and a reached limit is told: which limit, when it resets.

Two scopes limit: the server's own (`/limits`, counted per server) and the operator's
default (DEFAULT_MESSAGES_PER_HOUR / DEFAULT_TOKENS_PER_DAY, per member across every DM
and unconfigured server, counted in one bucket). Counters live in the shared database:
every bot process enforces one limit. Messages are counted in clock-hour buckets
(`bot.db.models.MessageHour`), taken with one atomic statement; the token limits count
the day's recorded usage (UTC).

Web searches have their own limit (`searches_per_day`, per member in one server), asked
before each search rather than at admission: an answer may search several times, or
not at all. It follows the token rules: only searches the server's keys (or the
operator's default in the server) pay for count, a member's own key is never limited,
and server rules do not reach DMs. Searches are counted in day buckets
(`bot.db.models.SearchDay`), taken with one atomic statement.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.repo.usage import (
    LIMITED_SOURCES,
    OPERATOR_BUCKET,
    Limits,
    get_limits,
    give_back_message,
    limited_tokens,
    messages_in_hour,
    operator_tokens,
    take_message,
)
from bot.repo.web_search import searches_on, take_search
from bot.usage.message_takes import Take, message_takes

log = logging.getLogger(__name__)

# Legs whose keys a limit protects (the environment default is a "server" leg too).
LIMITED_LEG = "server"


@dataclass(frozen=True)
class LimitReached:
    """Which limit, its value and when it resets; `key` is the line the member reads."""

    key: str
    limit: int
    resets: datetime

    def shown(self) -> dict[str, str]:
        """The line's values: the limit, and when it resets as Discord timestamps (the
        reader's own time zone)."""
        stamp = int(self.resets.timestamp())
        return {"limit": f"{self.limit:,}", "resets": f"<t:{stamp}:t> (<t:{stamp}:R>)"}


def operator_limits(messages_per_hour: int, tokens_per_day: int | None) -> Limits:
    """The operator's default limits as the settings give them: 0 (or unset tokens) is
    no limit."""
    return Limits(messages_per_hour or None, tokens_per_day or None)


def _next_day(now: datetime) -> datetime:
    return datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)


class _Refused(Exception):
    """Leaves the counting transaction so the message it took is given back."""

    def __init__(self, hit: LimitReached) -> None:
        super().__init__(hit.key)
        self.hit = hit


async def reached(sessions: Callable, guild_id: int, user_id: int, now: datetime, *,
                  take: bool, limits: Limits | None = None) -> LimitReached | None:
    """The first limit reached, or None; with `take`, an admitted message is counted in
    its hour. `limits` as the configuration cache holds them (read here when not given).
    The count comes first in its transaction (on SQLite it takes the write lock before
    any read, so two processes queue instead of failing), and a token limit found
    reached afterwards rolls it back."""
    if limits is None:
        async with sessions() as session:
            limits = await get_limits(session, guild_id)
    if not (limits.messages_per_hour or limits.tokens_per_day or limits.server_tokens_per_day):
        return None
    if take and limits.messages_per_hour and not (limits.tokens_per_day or limits.server_tokens_per_day):
        return await _take_alone(sessions, guild_id, user_id, now, limits.messages_per_hour)
    try:
        async with sessions() as session, session.begin():
            return await _check(session, limits, guild_id, user_id, now, take)
    except _Refused as refused:
        return refused.hit


async def _take_alone(sessions: Callable, guild_id: int, user_id: int, now: datetime,
                     per_hour: int) -> LimitReached | None:
    """Only a message limit: its take rides in the next batched transaction."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    if await message_takes(sessions).take(Take(guild_id, user_id, hour, per_hour)):
        return None
    return _hour_full(guild_id, per_hour, hour)


def _hour_full(guild_id: int, per_hour: int, hour: datetime) -> LimitReached:
    key = "chat.limit_default_messages" if guild_id == OPERATOR_BUCKET else "chat.limit_messages"
    return LimitReached(key, per_hour, hour + timedelta(hours=1))


async def _check(session: AsyncSession, limits: Limits, guild_id: int, user_id: int, now: datetime,
                 take: bool) -> LimitReached | None:
    hour = now.replace(minute=0, second=0, microsecond=0)
    per_hour = limits.messages_per_hour
    admitted = True
    if per_hour and take:
        admitted = await take_message(session, guild_id, user_id, hour, per_hour)
    elif per_hour:
        admitted = await messages_in_hour(session, guild_id, user_id, hour) < per_hour
    today = now.date()
    server_cap, member_cap = limits.server_tokens_per_day, limits.tokens_per_day
    operator = guild_id == OPERATOR_BUCKET
    if server_cap and not operator and await limited_tokens(session, guild_id, today) >= server_cap:
        raise _Refused(LimitReached("chat.limit_server_tokens", server_cap, _next_day(now)))
    if member_cap:
        spent = (await operator_tokens(session, today, user_id) if operator
                 else await limited_tokens(session, guild_id, today, user_id))
        if spent >= member_cap:
            key = "chat.limit_default_tokens" if operator else "chat.limit_member_tokens"
            raise _Refused(LimitReached(key, member_cap, _next_day(now)))
    return None if admitted else _hour_full(guild_id, per_hour or 0, hour)


@dataclass(frozen=True)
class Admission:
    """What the limits say of a question: None when admitted, else the limit reached."""

    hit: LimitReached | None = None


@dataclass(frozen=True)
class LimitFacts:
    """Who asks where, and the limits that may apply: the server's (from the question's
    configuration) and the operator's default's (from the settings)."""

    guild_id: int | None
    user_id: int
    server: Limits
    operator: Limits


def scopes(facts: LimitFacts, operator_default: bool) -> list[tuple[int, Limits]]:
    """The (bucket, limits) that count a server-paid answer of this question."""
    found = []
    if facts.guild_id is not None and _any(facts.server):
        found.append((facts.guild_id, facts.server))
    if operator_default and _any(facts.operator):
        found.append((OPERATOR_BUCKET, facts.operator))
    return found


def _any(limits: Limits) -> bool:
    return bool(limits.messages_per_hour or limits.tokens_per_day or limits.server_tokens_per_day)


async def admit(sessions: Callable | None, facts: LimitFacts, operator_default: bool,
                now: datetime | None = None) -> Admission:
    """Count one server-paid answer in every scope that limits it; on a reached limit
    give back what this call counted and say which. A database that cannot count is
    logged and the answer goes on (it matters more than the count)."""
    found = scopes(facts, operator_default)
    if sessions is None or not found:
        return Admission()
    now = now or datetime.now(UTC)
    hour = now.replace(minute=0, second=0, microsecond=0)
    taken: list[int] = []
    try:
        for bucket, limits in found:
            hit = await reached(sessions, bucket, facts.user_id, now, take=True, limits=limits)
            if hit is not None:
                await _give_back(sessions, facts.user_id, hour, taken)
                return Admission(hit)
            if limits.messages_per_hour:
                taken.append(bucket)
    except (SQLAlchemyError, OSError) as exc:
        log.error("limits of server %s cannot be counted (%s): the answer goes on unlimited",
                  facts.guild_id, type(exc).__name__)
    return Admission()


async def _give_back(sessions: Callable, user_id: int, hour: datetime, buckets: list[int]) -> None:
    """Another scope refused: the messages this admission counted leave their hours again."""
    if not buckets:
        return
    async with sessions() as session, session.begin():
        for bucket in buckets:
            await give_back_message(session, bucket, user_id, hour)


# ---- web searches ------------------------------------------------------------------------


def search_limit(guild_id: int | None, limits: Limits, credential_source: str) -> int | None:
    """The member's daily search limit over a search paid this way, or None: no limit
    in a DM, on the member's own key ("personal"), or where the server set none. The
    server's leg ("server", also when the operator's default pays it there) is limited."""
    if guild_id is None or (credential_source != LIMITED_LEG and credential_source not in LIMITED_SOURCES):
        return None
    return limits.searches_per_day or None


def _today(now: datetime | None) -> datetime:
    return now or datetime.now(UTC)


async def may_search(sessions: Callable | None, guild_id: int | None, user_id: int, limits: Limits,
                     credential_source: str, now: datetime | None = None) -> bool:
    """Asked before each search the bot runs: True when the member may search once more
    today (UTC) in this server, and that search is counted now; False, nothing counted,
    when their `searches_per_day` is reached. Unlimited (True, nothing counted) where
    `search_limit` is None. A database that cannot count is logged and the search goes
    on, as an answer does at admission."""
    limit = search_limit(guild_id, limits, credential_source)
    if limit is None or sessions is None or guild_id is None:
        return True
    try:
        async with sessions() as session, session.begin():
            return await take_search(session, guild_id, user_id, _today(now).date(), limit)
    except (SQLAlchemyError, OSError) as exc:
        log.error("searches of server %s cannot be counted (%s): the search goes on unlimited",
                  guild_id, type(exc).__name__)
        return True


async def searches_left(sessions: Callable | None, guild_id: int | None, user_id: int, limits: Limits,
                        credential_source: str, now: datetime | None = None) -> int | None:
    """For a route whose provider searches natively (it decides how often, after the
    request is sent): how many searches the member has left today here, to cap the
    request's searches (0: offer none); None when no limit applies or it cannot be read."""
    limit = search_limit(guild_id, limits, credential_source)
    if limit is None or sessions is None or guild_id is None:
        return None
    try:
        async with sessions() as session:
            used = await searches_on(session, guild_id, user_id, _today(now).date())
    except (SQLAlchemyError, OSError) as exc:
        log.error("searches of server %s cannot be read (%s): not capped", guild_id, type(exc).__name__)
        return None
    return max(limit - used, 0)
