"""Configuration stamps: every settings write bumps its scope's stamp in the same
transaction, so bot processes sharing the database learn what changed with one query.

Scopes: "server" (a guild id: everything its managers set, and its keys' rests),
"member" (a user id: the member's own keys and models) and "environment" (id 0: the
rests of the operator's DEFAULT_TEXT_API_KEYS). A stamp is the next value of one clock row; taking it
locks that row until the write commits, so stamps become visible in the order they were
taken and `changed_since(N)` never skips a write that commits late. Settings writes are
rare and short, so that one lock costs nothing noticeable.

A write function declares itself with `@config_write(scope, id_argument)`; the stamp is
taken after its body succeeded. The session remembers what it bumped
(`session.info[BUMPED]`) so this process drops its own cached copies at commit
(`bot.load.config_cache`), without waiting for its next poll.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, ParamSpec, TypeVar

from sqlalchemy import Integer, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.db.models_processes import ConfigClock, ConfigVersion
from bot.repo.common import insert_for

P = ParamSpec("P")
R = TypeVar("R")

Scope = Literal["server", "member", "environment"]
SCOPES: tuple[str, ...] = ("server", "member", "environment")
BUMPED = "config_bumped"  # session.info key: (scope, id, stamp) this transaction took
CLOCK_ID = 1


@dataclass(frozen=True)
class Change:
    scope: str
    scope_id: int
    version: int


async def _next_stamp(session: AsyncSession) -> int:
    """The clock's next value, its row locked until this transaction ends."""
    result = await session.execute(update(ConfigClock).where(ConfigClock.id == CLOCK_ID)
                                   .values(value=ConfigClock.value + 1).returning(ConfigClock.value)
                                   .execution_options(synchronize_session=False))
    stamp = result.scalar()
    if stamp is None:  # a database migrated without the clock row: start it
        await session.execute(insert_for(session, ConfigClock).values(id=CLOCK_ID, value=1)
                              .on_conflict_do_nothing(index_elements=["id"]))
        return await _next_stamp(session)
    return int(stamp)


async def bump(session: AsyncSession, scope: Scope, scope_id: int) -> int:
    """Stamp `scope`/`scope_id` as changed by this transaction; returns the stamp."""
    stamp = await _next_stamp(session)
    stmt = insert_for(session, ConfigVersion).values(scope=scope, scope_id=scope_id, version=stamp)
    await session.execute(stmt.on_conflict_do_update(index_elements=["scope", "scope_id"],
                                                     set_={"version": stamp}))
    session.info.setdefault(BUMPED, set()).add((scope, scope_id, stamp))
    return stamp


async def latest_stamp(session: AsyncSession) -> int:
    """The highest stamp committed so far (0 on a fresh database)."""
    return int(await session.scalar(select(func.max(ConfigVersion.version))) or 0)


# Built once: every process asks it every CONFIG_POLL_SECONDS.
_CHANGED_SINCE = (select(ConfigVersion.scope, ConfigVersion.scope_id, ConfigVersion.version)
                  .where(ConfigVersion.version > bindparam("stamp")).order_by(ConfigVersion.version)
                  .limit(bindparam("limit", type_=Integer)))


async def changed_since(connection: AsyncSession | AsyncConnection, stamp: int, limit: int = 10_000) -> list[Change]:
    """Scopes stamped after `stamp`, oldest first (at most `limit`: poll again for more)."""
    rows = await connection.execute(_CHANGED_SINCE, {"stamp": stamp, "limit": limit})
    return [Change(scope, scope_id, int(version)) for scope, scope_id, version in rows]


def config_write(scope: Scope, id_argument: str) -> Callable[[Callable[P, Awaitable[R]]],
                                                             Callable[P, Awaitable[R]]]:
    """Mark a settings write: after it succeeds, its scope (the value of the argument
    `id_argument`) is bumped in the same transaction. A member-scope write whose
    `id_argument` is None (no such member) bumps nothing."""
    def wrap(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        async def stamped(*args: P.args, **kwargs: P.kwargs) -> R:
            result = await fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            scope_id = bound.arguments.get(id_argument)
            if scope_id is not None:
                await bump(bound.arguments["session"], scope, scope_id)
            return result

        stamped.config_scope = scope  # type: ignore[attr-defined] - read by the write-walk test
        return stamped
    return wrap
