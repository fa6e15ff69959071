"""Usage counters, message-hour buckets, model prices and server limits.

Every counter is added to with one upsert (INSERT ... ON CONFLICT DO UPDATE SET x = x +
excluded.x) on SQLite and PostgreSQL alike, so bot processes sharing the database never
lose each other's counts and enforce one limit together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Integer, and_, bindparam, cast, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import MessageHour, ModelPrice, UsageDay, UsageLimits
from bot.repo.common import RepositoryError, ensure_server, insert_for, kept_statement
from bot.repo.servers import check_model
from bot.repo.versions import config_write
from bot.usage.tokens import TokenCounts

# Who pays: the member's own key, the server's keys, or the operator's environment default.
LIMITED_SOURCES = ("server", "environment")
# The message-hour bucket of the operator's default limits (no server has id 0): one per
# member across every DM and unconfigured server.
OPERATOR_BUCKET = 0
# The highest value of each `/limits set` option, registered on the command and checked here
# (and in docs/commands.md): messages and searches fit an Integer column and are far beyond any
# real hour or day; tokens, far beyond any real server's day.
MAX_MESSAGES_PER_HOUR = 1_000_000
MAX_TOKENS_PER_DAY = 1_000_000_000
MAX_SEARCHES_PER_DAY = 1_000_000
MAX_IMAGES_PER_DAY = 1_000  # images one member may draw per UTC day on the server
MAX_PRICE = 1_000_000.0
COUNTERS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "messages", "searches")


@dataclass(frozen=True)
class UsageKey:
    """Which day row an answer adds to."""

    guild_id: int | None
    user_id: int
    provider: str
    model: str
    credential_source: str
    day: date


@dataclass(frozen=True)
class UsageTotal:
    """Summed counters of one group (a model, a member, or everything)."""

    label: Any
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_input_tokens: int
    messages: int
    estimated: bool
    searches: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Limits:
    messages_per_hour: int | None = None
    tokens_per_day: int | None = None
    server_tokens_per_day: int | None = None
    searches_per_day: int | None = None
    images_per_day: int | None = None


@dataclass(frozen=True)
class Price:
    """What a server pays for one model: per million tokens, per thousand web searches
    (None: searches not priced)."""

    input_per_million: float
    output_per_million: float
    per_1000_searches: float | None = None


@dataclass(frozen=True)
class UsageAdd:
    """What to add to one day row: `messages` answers with these counts in all."""

    key: UsageKey
    counts: TokenCounts
    messages: int = 1

    def params(self) -> dict[str, Any]:
        """The row's values; a count the provider did not report adds nothing."""
        k, c = self.key, self.counts
        return {"guild_id": k.guild_id, "user_id": k.user_id, "provider": k.provider, "model": k.model,
                "credential_source": k.credential_source, "day": k.day, "estimated": c.estimated,
                "input_tokens": c.input_tokens or 0, "output_tokens": c.output_tokens or 0,
                "reasoning_tokens": c.reasoning_tokens or 0, "cached_input_tokens": c.cached_input_tokens or 0,
                "messages": self.messages, "searches": c.searches or 0}


async def add_usages(session: AsyncSession, adds: Sequence[UsageAdd]) -> None:
    """Add answers to their day rows, creating a row when it is the day's first: one
    statement sent with every row's values (executemany) per conflict target."""
    for in_dm in (False, True):
        params = [add.params() for add in adds if (add.key.guild_id is None) == in_dm]
        if params:
            await session.execute(_usage_upsert(session, in_dm), params)


def _usage_upsert(session: AsyncSession, in_dm: bool) -> Any:
    """The statement for one conflict target, built once per database dialect: building it
    (the `excluded` alias copies every column) cost more than sending it."""
    return kept_statement(session, ("usage_day", in_dm), lambda s: _build_usage_upsert(s, in_dm))


def _build_usage_upsert(session: AsyncSession, in_dm: bool) -> Any:
    stmt = insert_for(session, UsageDay.__table__)
    columns = ["user_id", "provider", "model", "credential_source", "day", "estimated"]
    if in_dm:  # a DM: the partial unique index, so its WHERE is the conflict target's
        target: dict[str, Any] = {"index_elements": columns, "index_where": text("guild_id IS NULL")}
    else:
        target = {"index_elements": ["guild_id", *columns]}
    table = UsageDay.__table__.c
    added = {name: table[name] + getattr(stmt.excluded, name) for name in COUNTERS}
    return stmt.on_conflict_do_update(**target, set_=added)


def _sums(*group: Any) -> Any:
    return select(*group, func.sum(UsageDay.input_tokens), func.sum(UsageDay.output_tokens),
                  func.sum(UsageDay.reasoning_tokens), func.sum(UsageDay.cached_input_tokens),
                  func.sum(UsageDay.messages), func.max(cast(UsageDay.estimated, Integer)),
                  func.sum(UsageDay.searches))


def _total(label: Any, row: Any) -> UsageTotal:
    numbers = [int(v or 0) for v in row[-7:]]
    return UsageTotal(label, *numbers[:5], bool(numbers[5]), numbers[6])


async def usage_by(session: AsyncSession, since: date, *, guild_id: int | None = None, user_id: int | None = None,
                   by: str = "model", limit: int | None = None) -> list[UsageTotal]:
    """Totals since `since` (inclusive) for one server and/or member, grouped by model
    ("model": label is (provider, model)), by member ("user", largest first) or not at all."""
    where = [UsageDay.day >= since]
    if guild_id is not None:
        where.append(UsageDay.guild_id == guild_id)
    if user_id is not None:
        where.append(UsageDay.user_id == user_id)
    group = {"model": (UsageDay.provider, UsageDay.model), "user": (UsageDay.user_id,), "all": ()}[by]
    query = _sums(*group).where(and_(*where))
    if group:
        query = query.group_by(*group)
    tokens = func.sum(UsageDay.input_tokens) + func.sum(UsageDay.output_tokens)
    query = query.order_by(tokens.desc(), *group).limit(limit)
    rows = (await session.execute(query)).all()
    return [_total(tuple(row[: len(group)]) if len(group) > 1 else (row[0] if group else None), row)
            for row in rows if row[-3] is not None]


async def limited_tokens(session: AsyncSession, guild_id: int, day: date, user_id: int | None = None) -> int:
    """Tokens paid by the server's keys or the environment default on `day` (one member's,
    or everyone's): what the daily limits count."""
    where = [UsageDay.guild_id == guild_id, UsageDay.day == day, UsageDay.credential_source.in_(LIMITED_SOURCES)]
    if user_id is not None:
        where.append(UsageDay.user_id == user_id)
    total = await session.scalar(
        select(func.sum(UsageDay.input_tokens + UsageDay.output_tokens)).where(and_(*where)))
    return int(total or 0)


async def take_message(session: AsyncSession, guild_id: int, user_id: int, hour: datetime, limit: int) -> bool:
    """Count one message in the member's hour if that stays within `limit`; False (nothing
    counted) when the hour is full. One statement, so two processes cannot both take the last."""
    params = {"guild_id": guild_id, "user_id": user_id, "hour": hour, "limit": limit}
    return (await session.execute(kept_statement(session, "take_message", _take_upsert), params)).first() is not None


def _take_upsert(session: AsyncSession) -> Any:
    """`take_message`'s statement on the table (Core, its values bound at execution): every
    admitted answer sends one, and building it anew through the ORM's bulk insert, which
    also turns its RETURNING into ORM rows, cost 0.5 ms of CPU per take."""
    table = MessageHour.__table__
    stmt = insert_for(session, table).values(guild_id=bindparam("guild_id"), user_id=bindparam("user_id"),
                                             hour=bindparam("hour"), messages=1)
    return stmt.on_conflict_do_update(
        index_elements=["guild_id", "user_id", "hour"], set_={"messages": table.c.messages + 1},
        where=table.c.messages < bindparam("limit"),
    ).returning(table.c.messages)


async def give_back_message(session: AsyncSession, guild_id: int, user_id: int, hour: datetime) -> None:
    """Take one counted message out of the member's hour again (never below zero)."""
    await session.execute(update(MessageHour).where(
        MessageHour.guild_id == guild_id, MessageHour.user_id == user_id, MessageHour.hour == hour,
        MessageHour.messages > 0).values(messages=MessageHour.messages - 1))


async def operator_tokens(session: AsyncSession, day: date, user_id: int) -> int:
    """Tokens the operator's environment default paid for one member on `day`, wherever
    it answered them (DMs and unconfigured servers): what DEFAULT_TOKENS_PER_DAY counts."""
    total = await session.scalar(select(func.sum(UsageDay.input_tokens + UsageDay.output_tokens)).where(
        UsageDay.user_id == user_id, UsageDay.day == day, UsageDay.credential_source == "environment"))
    return int(total or 0)


async def messages_in_hour(session: AsyncSession, guild_id: int, user_id: int, hour: datetime) -> int:
    count = await session.scalar(select(MessageHour.messages).where(
        MessageHour.guild_id == guild_id, MessageHour.user_id == user_id, MessageHour.hour == hour))
    return int(count or 0)


async def get_limits(session: AsyncSession, guild_id: int) -> Limits:
    row = await session.get(UsageLimits, guild_id)
    if row is None:
        return Limits()
    return Limits(row.messages_per_hour, row.tokens_per_day, row.server_tokens_per_day, row.searches_per_day,
                  row.images_per_day)


def _limit(value: int | None, current: int | None, bound: int) -> int | None:
    """None keeps the stored value, 0 removes the limit; negative or absurd is refused."""
    if value is None:
        return current
    if value < 0 or value > bound:
        raise RepositoryError("bad_limit")
    return value or None


@config_write("server", "guild_id")
async def set_limits(session: AsyncSession, guild_id: int, messages_per_hour: int | None = None,
                     tokens_per_day: int | None = None, server_tokens_per_day: int | None = None,
                     searches_per_day: int | None = None, images_per_day: int | None = None) -> Limits:
    """Change the given limits (each checked before anything is written)."""
    old = await get_limits(session, guild_id)
    new = Limits(_limit(messages_per_hour, old.messages_per_hour, MAX_MESSAGES_PER_HOUR),
                 _limit(tokens_per_day, old.tokens_per_day, MAX_TOKENS_PER_DAY),
                 _limit(server_tokens_per_day, old.server_tokens_per_day, MAX_TOKENS_PER_DAY),
                 _limit(searches_per_day, old.searches_per_day, MAX_SEARCHES_PER_DAY),
                 _limit(images_per_day, old.images_per_day, MAX_IMAGES_PER_DAY))
    await ensure_server(session, guild_id)
    stmt = insert_for(session, UsageLimits).values(guild_id=guild_id, **new.__dict__)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"], set_=new.__dict__))
    return new


def checked_price(value: float) -> float:
    """A price as stored: 0 to `MAX_PRICE`, anything else (NaN too) refused as `bad_price`."""
    if not 0 <= value <= MAX_PRICE:  # also refuses NaN
        raise RepositoryError("bad_price")
    return float(value)


@config_write("server", "guild_id")
async def set_price(session: AsyncSession, guild_id: int, model: str, input_per_million: float,
                    output_per_million: float, per_1000_searches: float | None = None) -> str:
    """Store what the server pays per million input and output tokens of `model`, and
    per thousand web searches (None keeps the stored search price)."""
    model = check_model(model)
    prices = {"input_per_million": checked_price(input_per_million), "output_per_million": checked_price(output_per_million)}
    if per_1000_searches is not None:
        prices["per_1000_searches"] = checked_price(per_1000_searches)
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ModelPrice).values(guild_id=guild_id, model=model, **prices)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id", "model"], set_=prices))
    return model


async def prices_of(session: AsyncSession, guild_id: int) -> dict[str, Price]:
    rows = await session.execute(select(ModelPrice.model, ModelPrice.input_per_million, ModelPrice.output_per_million,
                                        ModelPrice.per_1000_searches).where(ModelPrice.guild_id == guild_id))
    return {model: Price(inp, out, searches) for model, inp, out, searches in rows}
