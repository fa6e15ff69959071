"""One generation turn: walk the member's route until an attempt answers.

Each attempt streams through `stream.orchestrator.run_stream`, which returns errors
instead of showing them; the attempt plan (`bot.turn.attempts`) asks the planner whether
the next key, the next model or nothing comes next. A failed attempt's partial answer
stays on screen until another attempt really starts, and is then deleted
(`MessageDelivery.retract`), so a reader never sees two answers; when nothing is left to
try, the last failure keeps its partial text (marked interrupted) and gets the error
embed, scoped to whose key failed. With tools, a `function_call` answer runs them and
streams on into the same reply (`bot.tools.loop`); a failure after the tools ran is
shown in place, never retried, since the answer has already begun. Keys are never
logged: only their masked tails are.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from bot.errors import ErrorScene
from bot.errors.presentation import private_detail
from bot.load.metrics import DATABASE_ERRORS, observe_first_content
from bot.repo import ModelTarget
from bot.tools.loop import ToolLoop
from bot.turn.attempts import Attempt, AttemptPlan, AttemptRecord, open_adapter, target_label
from bot.turn.context import TurnContext
from bot.turn.credentials import Credentials, CredentialsUnavailable, TurnRoute
from bot.turn.notices import (
    end_notes,
    fallback_chain_of,
    fallback_notice,
    say,
    say_blocked,
    show_failure,
    tool_limit_notice,
)
from bot.turn.seams import TurnEnding
from providers import ChatRequest, normalized_stream
from providers.address import route_address
from providers.metrics import FALLBACKS_USED, KEY_ROTATIONS
from stream.buffer import MessageDelivery
from stream.orchestrator import StreamResult, run_stream

log = logging.getLogger(__name__)


@dataclass
class TurnOutcome:
    """How the turn ended: the answering (or last failed) attempt's result, or why none ran."""

    result: StreamResult | None = None
    target: ModelTarget | None = None
    credential_source: str | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    blocked: str | None = None
    fallback_used: bool = False
    error_shown: bool = False
    # A custom endpoint's own error words (redacted), kept out of the public embed: for
    # the managers' thought-log channel only.
    private_detail: str | None = None


@dataclass
class _Tried:
    """One attempt with the messages it posted and how its stream ended; a failed one
    stays on screen until a retry supersedes it."""

    attempt: Attempt
    delivery: MessageDelivery
    result: StreamResult
    pool_exhausted: bool = False


async def run_generation_turn(ctx: TurnContext, request: ChatRequest, credentials: Credentials,
                              tools: ToolLoop | None = None, route: TurnRoute | None = None) -> TurnOutcome:
    """Answer `request` through the member's route (`route`, as the question's admission
    left it after its limits, else read from the question's configuration); see the
    module docstring. A database that stops answering mid-turn is said, never silent.

    One deadline spans the whole turn (`limits.total_seconds`): every attempt, fallback
    and tool round; when it passes, the interrupt fires with `deadline` and the answer ends
    where it is, with a note. Each stream's own bound (`stream.limits`) is only a backstop."""
    timer = asyncio.get_running_loop().call_later(ctx.limits.total_seconds, ctx.interrupt.fire, "deadline")
    try:
        return await _run_turn(ctx, request, credentials, tools, route or credentials.route(ctx.config))
    except CredentialsUnavailable as exc:
        DATABASE_ERRORS.labels("turn").inc()
        log.error("the database cannot be read (%s): the turn cannot read its keys", exc)
        await say(ctx, exc.notice)  # busy: try again in a moment; down: cannot reach it
        return TurnOutcome(blocked="database_busy" if exc.busy else "database_down")
    finally:
        timer.cancel()


async def _run_turn(ctx: TurnContext, request: ChatRequest, credentials: Credentials,
                    tools: ToolLoop | None, route: TurnRoute) -> TurnOutcome:
    if route.blocked is not None or not route.legs:
        await say_blocked(ctx, route.blocked or "no_route")
        return TurnOutcome(blocked=route.blocked or "no_route")
    if tools is not None:
        request = tools.with_tools(request)
    plan = AttemptPlan(route, credentials, ctx.config)
    secrets: list[str] = []
    failure: _Tried | None = None
    pay_check = ctx.server_may_pay  # once: on the first attempt the server's keys pay for
    async for attempt in plan:
        if ctx.interrupt.is_set():
            break
        if pay_check is not None and attempt.leg.credential_source == "server":
            allowed, pay_check = await pay_check(), None
            if not allowed and failure is None:
                return TurnOutcome(blocked="limit_reached", attempts=plan.records)
            if not allowed:
                break  # the member's own key failed and the server's limits refuse to take over
        adapter = open_adapter(attempt.target, attempt.lease, route.verbatim_tool_calling, ctx.access)
        if adapter is None:
            plan.skip_model(attempt)
            continue
        ctx.access.learn(attempt.target, attempt.lease.secret)  # what its models take, for later attempts
        secrets.append(attempt.lease.secret)
        if failure is not None:
            await _supersede(failure, attempt)
        delivery = MessageDelivery(ctx.sink, budget=ctx.budget, max_messages=ctx.max_messages,
                                   limit=ctx.message_limit, resume=ctx.resume)
        ctx.shown.delivery = delivery  # a reply to a part while it streams sees the whole answer
        asked = request
        for part in ctx.parts:
            asked = await part.for_attempt(asked, adapter.capabilities, attempt.leg.credential_source)
        try:
            result = await run_stream(normalized_stream(adapter, asked), delivery, ctx.interrupt,
                                      keep_open_for_calls=tools is not None, limits=ctx.limits,
                                      provider=attempt.target.provider)
            observe_first_content(result.first_content_seconds, attempt.target.provider)
            if result.error is None:
                result = await _run_tools(tools, adapter, asked, _Tried(attempt, delivery, result), ctx)
                return await _answered(ctx, plan, _Tried(attempt, delivery, result), secrets)
        finally:
            await _close(adapter)
        await plan.failed(attempt, result.error)
        failure = _Tried(attempt, delivery, result, plan.pool_exhausted(attempt))
    if ctx.interrupt.reason == "follow_up" or (ctx.interrupt.is_set() and failure is None):
        return TurnOutcome(attempts=plan.records)  # interrupted before anything was shown
    return await _give_up(ctx, plan, failure, secrets)


async def _run_tools(tools: ToolLoop | None, adapter: Any, request: ChatRequest, tried: _Tried,
                     ctx: TurnContext) -> StreamResult:
    if tools is None or tried.result.status != "function_call":
        return tried.result
    return await tools.run(adapter, request, tried.result, tried.delivery, ctx.interrupt, ctx.limits)


async def _answered(ctx: TurnContext, plan: AttemptPlan, tried: _Tried, secrets: list[str]) -> TurnOutcome:
    """The attempt answered (perhaps failing later, after tools ran: shown in place)."""
    attempt, result = tried.attempt, tried.result
    await plan.succeeded(attempt, "interrupted" if result.status == "interrupted" else "ok")
    outcome = TurnOutcome(result=result, target=attempt.target, credential_source=attempt.leg.credential_source,
                          attempts=plan.records, fallback_used=attempt.uses_fallback)
    if result.error is not None:
        outcome.error_shown = await show_failure(ctx, tried.delivery, result.error,
                                                 _scene(ctx, attempt, secrets, False))
        outcome.private_detail = private_detail(result.error, ctx.locale, secrets)
    elif result.status == "function_call":  # the tool loop's bounds ended the answer
        await tool_limit_notice(ctx, tried.delivery)
    else:
        await end_notes(ctx, tried.delivery, result)
    for part in ctx.parts:
        await part.after(TurnEnding(ctx.locale, tried.delivery, result))
    if outcome.fallback_used and result.status != "interrupted":
        FALLBACKS_USED.labels(attempt.target.provider).inc()
        await fallback_notice(ctx, attempt.leg_index > 0, target_label(attempt.target))
    return outcome


async def _give_up(ctx: TurnContext, plan: AttemptPlan, failure: _Tried | None,
                   secrets: list[str]) -> TurnOutcome:
    """Nothing more to try: show the last failure's embed, or say why nothing ran."""
    if failure is None:
        blocked = "no_route" if plan.tried_any else "no_usable_key" if plan.keys_configured else "no_key"
        await say_blocked(ctx, blocked)
        return TurnOutcome(blocked=blocked, attempts=plan.records)
    attempt = failure.attempt
    scene = _scene(ctx, attempt, secrets, failure.pool_exhausted)
    error = failure.result.error
    assert error is not None  # a kept failure always has its error
    shown = await show_failure(ctx, failure.delivery, error, scene)
    return TurnOutcome(result=failure.result, target=attempt.target, attempts=plan.records,
                       credential_source=attempt.leg.credential_source, error_shown=shown,
                       private_detail=private_detail(error, ctx.locale, secrets))


def _scene(ctx: TurnContext, attempt: Attempt, secrets: list[str], pool_exhausted: bool) -> ErrorScene:
    """Who reads the failure and whose route failed: decides the embed's title and tips."""
    server = attempt.leg.credential_source == "server"
    return ErrorScene(ctx.locale, attempt.leg.credential_source,
                      fallback_chain_of(attempt.leg.chain[1:]) if server else (), pool_exhausted, tuple(secrets),
                      ctx.audience, route_address(attempt.target.provider, attempt.target.base_url))


async def _supersede(failure: _Tried, attempt: Attempt) -> None:
    """A retry really starts: the failed attempt's partial answer goes."""
    await failure.delivery.retract()
    if failure.attempt.leg is attempt.leg and attempt.key_index > 0:
        KEY_ROTATIONS.labels(attempt.target.provider).inc()


async def _close(adapter: Any) -> None:
    """The attempt is over: the adapter drops its SDK client. A shared HTTP client stays
    open (the adapter knows it is the pool's), so the next attempt reuses it."""
    closer = getattr(adapter, "aclose", None)
    if closer is not None:
        with contextlib.suppress(Exception):
            await closer()
