"""The server's limits, checked before a provider is asked.

Limits protect what the server and the operator pay for: the server's keys and the
operator's environment default. An answer paid by the member's own key is counted in
usage but never limited, and only the route knows whose key pays, so the turn calls
`admit` right after reading the route. When the member's own key comes first and the
server's keys are only its fallback, a reached limit removes that fallback instead of
refusing. Counters live in the shared database: every bot process enforces one limit.
Messages are counted in clock-hour buckets (`bot.db.models.MessageHour`), taken with
one atomic statement; the token limits count the day's recorded usage (UTC).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.config_cache import cache_of
from bot.repo.usage import Limits, get_limits, limited_tokens, messages_in_hour, take_message

if TYPE_CHECKING:  # the turn imports this module: its types only for the checker
    from bot.turn.context import TurnContext
    from bot.turn.credentials import TurnRoute

log = logging.getLogger(__name__)

# Legs whose keys a limit protects (the environment default is a "server" leg too).
LIMITED_LEG = "server"


@dataclass(frozen=True)
class LimitReached:
    """Which limit, its value and when it resets; `key` is the line the member reads."""

    key: str
    limit: int
    resets: datetime


def sessions_of(credentials: Any) -> Callable | None:
    """The database the turn's credentials read (None for the environment-only credentials,
    which have no database to count in)."""
    return getattr(credentials, "sessions", None)


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
    try:
        async with sessions() as session, session.begin():
            return await _check(session, limits, guild_id, user_id, now, take)
    except _Refused as refused:
        return refused.hit


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
    if server_cap and await limited_tokens(session, guild_id, today) >= server_cap:
        raise _Refused(LimitReached("chat.limit_server_tokens", server_cap, _next_day(now)))
    if member_cap and await limited_tokens(session, guild_id, today, user_id) >= member_cap:
        raise _Refused(LimitReached("chat.limit_member_tokens", member_cap, _next_day(now)))
    if not admitted:
        return LimitReached("chat.limit_messages", per_hour or 0, hour + timedelta(hours=1))
    return None


async def admit(ctx: TurnContext, route: TurnRoute, credentials: Any,
                now: datetime | None = None) -> TurnRoute | None:
    """The route to walk, or None when a limit refused the turn (the member was told
    which one and when it resets; no provider was asked)."""
    sessions = sessions_of(credentials)
    if ctx.guild_id is None or sessions is None or not any(leg.credential_source == LIMITED_LEG
                                                           for leg in route.legs):
        return route
    server_pays = route.legs[0].credential_source == LIMITED_LEG
    now = now or datetime.now(UTC)
    config = cache_of(sessions)
    try:
        limits = (await config.server(ctx.guild_id)).limits if config is not None else None
        hit = await reached(sessions, ctx.guild_id, ctx.user_id, now, take=server_pays, limits=limits)
    except (SQLAlchemyError, OSError) as exc:
        log.error("limits of server %s cannot be read (%s): the turn goes on unlimited", ctx.guild_id, exc)
        return route
    if hit is None:
        return route
    if not server_pays:  # the member's own key answers; only the server's fallback closes
        return dataclasses.replace(route, legs=tuple(leg for leg in route.legs
                                                     if leg.credential_source != LIMITED_LEG))
    from bot.turn.notices import say  # at call time: bot.turn is loaded by then

    stamp = int(hit.resets.timestamp())
    await say(ctx, hit.key, limit=f"{hit.limit:,}", resets=f"<t:{stamp}:t> (<t:{stamp}:R>)")
    return None
