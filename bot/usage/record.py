"""Recording what an answer cost, after it was delivered (one short transaction).

The row says who asked, where, which model, whose key paid (the member's own, the
server's, or the operator's environment default) and the UTC day. A failure here is
logged and never reaches the member: the answer is already on screen.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.repo.routes import resolve_server_route
from bot.repo.usage import UsageKey, add_usage
from bot.settings import Settings
from bot.turn.context import TurnContext
from bot.usage.tokens import counts_for
from providers.types import ChatRequest

log = logging.getLogger(__name__)


async def payer(session: AsyncSession, settings: Settings, guild_id: int | None, credential_source: str) -> str:
    """"personal", "server", or "environment" when the server's route is the operator's default."""
    if credential_source != "server":
        return credential_source
    route = await resolve_server_route(session, settings, guild_id)
    return "environment" if route.origin == "environment" else "server"


async def record_usage(sessions: Callable | None, settings: Settings, ctx: TurnContext, request: ChatRequest,
                       outcome: object, now: datetime | None = None) -> None:
    """Add the answer of `outcome` (a `TurnOutcome`) to its day row; nothing when no
    attempt produced anything."""
    result = getattr(outcome, "result", None)
    target = getattr(outcome, "target", None)
    source = getattr(outcome, "credential_source", None)
    if sessions is None or result is None or target is None or source is None:
        return
    if result.usage is None and not result.text.strip():
        return  # a failure before any output: nothing to count
    counts = counts_for(result.usage, request, result.text)
    day = (now or datetime.now(UTC)).date()
    try:
        async with sessions() as session:
            paid_by = await payer(session, settings, ctx.guild_id, source)
        key = UsageKey(ctx.guild_id, ctx.user_id, target.provider, target.model, paid_by, day)
        async with sessions() as session, session.begin():  # the write alone: SQLite's lock is brief
            await add_usage(session, key, counts)
    except Exception:  # noqa: BLE001 - bookkeeping must never disturb a delivered answer
        log.exception("recording the usage of an answer in server %s failed", ctx.guild_id)
