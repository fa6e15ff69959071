"""Recording what an answer cost, after it was delivered, in a batch off its path.

The row says who asked, where, which model, whose key paid (the member's own, the
server's, or the operator's environment default) and the UTC day. The write is queued
(`bot.load.write_behind`): a failure there is logged and counted and never reaches the
member, whose answer is already on screen.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime

from bot.load.bookkeeping import UsageWrite
from bot.load.write_behind import WriteBehind
from bot.repo.routes import ServerRoute
from bot.repo.usage import UsageAdd, UsageKey
from bot.turn.context import TurnContext
from bot.usage.tokens import TokenCounts, counts_for
from providers.types import ChatRequest, Usage

log = logging.getLogger(__name__)


def payer(server_route: ServerRoute, credential_source: str) -> str:
    """"personal", "server", or "environment" when the server's route is the operator's default."""
    if credential_source != "server":
        return credential_source
    return "environment" if server_route.origin == "environment" else "server"


def usage_of(ctx: TurnContext, request: ChatRequest, outcome: object, now: datetime | None = None,
             searches: int = 0) -> tuple[UsageKey, TokenCounts, str] | None:
    """The day row an answer adds to (its payer still to decide), or None when no
    attempt produced anything. `searches`: those the bot's own search service ran for
    the answer (a provider's native searches come in its `Usage.searches`)."""
    result = getattr(outcome, "result", None)
    target = getattr(outcome, "target", None)
    source = getattr(outcome, "credential_source", None)
    if result is None or target is None or source is None:
        return None
    if result.usage is None and not result.text.strip() and not searches:
        return None  # a failure before any output: nothing to count
    day = (now or datetime.now(UTC)).date()
    key = UsageKey(ctx.guild_id, ctx.user_id, target.provider, target.model, source, day)
    counts = counts_for(result.usage, request, result.text)
    if searches:
        counts = counts + Usage(searches=searches)
    return key, counts, source


def record_usage(writes: WriteBehind, ctx: TurnContext, request: ChatRequest, outcome: object,
                 server_route: ServerRoute | None, now: datetime | None = None, *, searches: int = 0) -> None:
    """Queue the answer of `outcome` (a `TurnOutcome`) for its day row: written with the
    next batch (`writes`), never on the answer's path. `server_route` is the server's
    route from the question's configuration read (None when it could not be read: the
    operator's default answered, so the server's leg counts as the environment's);
    `searches` as in `usage_of`."""
    found = usage_of(ctx, request, outcome, now, searches)
    if found is not None:
        key, counts, _ = found
        queue_usage(writes, key, counts, server_route)


def queue_usage(writes: WriteBehind, key: UsageKey, counts: TokenCounts, server_route: ServerRoute | None) -> None:
    """Queue one answer's `counts` for the day row of `key`, whose credential source
    ("server" or "personal") becomes who paid: the server's route decides whether the
    server's leg was the operator's default (`payer`; None: the route could not be read,
    so the operator's default answered)."""
    source = key.credential_source
    if server_route is None:
        paid_by = "environment" if source == "server" else source
    else:
        paid_by = payer(server_route, source)
    writes.put(UsageWrite(UsageAdd(dataclasses.replace(key, credential_source=paid_by), counts)))
