"""One generation turn: walk the route's models x keys until an attempt answers (spec §7).

Each attempt streams through the stream layer's `run_stream` with errors suppressed;
the planner (`bot.turn.policy`) reads a failure's scope and says whether the next key,
the next model or nothing comes next. A failed attempt's partial answer stays on screen
until another attempt really starts, and is then deleted (`MessageDelivery.retract`),
so a reader never sees two answers; when nothing is left to try, the last failure keeps
its partial text (marked interrupted) and gets the error embed, scoped to whose key
failed. Keys are never logged: only their masked tails and kinds are.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.repo import KeyLease, ModelTarget
from bot.tools.loop import ToolLoop
from bot.turn.credentials import Credentials, Leg
from bot.turn.policy import Step, plan_next, retry_after_seconds
from providers import ChatRequest, create_adapter, normalized_stream
from providers.i18n import t
from providers.metrics import FALLBACKS_USED, KEY_ROTATIONS
from providers.types import ProviderError
from stream.buffer import MessageDelivery
from stream.error_embed_spec import error_embed_renderer
from stream.orchestrator import StreamResult, default_error_embed, interrupted_note, run_stream
from stream.pacing import EditBudget
from stream.sink import MessageSink, SentMessage, SinkError

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 8  # one turn never hammers a provider more than this
PROVIDER_TIMEOUT = 120.0
BLOCKED_KEYS = {
    "no_route": "chat.not_configured",
    "member_key_required": "chat.member_key_required",
    "no_usable_key": "chat.keys_cooling",
}


@dataclass(frozen=True)
class Attempt:
    """What one attempt used and how it ended (masked key only)."""

    credential_source: str
    provider: str
    model: str
    key: str
    outcome: str  # "ok", "stopped", or the planner's reason
    action: str | None = None  # the planner's step after a failure


@dataclass
class TurnOutcome:
    """How the turn ended: the answering attempt's stream result, or why none ran."""

    result: StreamResult | None = None
    target: ModelTarget | None = None
    credential_source: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    blocked: str | None = None
    fallback_used: bool = False


@dataclass
class _Failure:
    """The latest failed attempt, kept on screen until a retry supersedes it."""

    delivery: MessageDelivery
    result: StreamResult
    error: ProviderError
    leg: Leg
    target: ModelTarget
    rotation_exhausted: bool


def utc_now() -> datetime:
    return datetime.now(UTC)


def target_label(target: ModelTarget) -> str:
    return f"{target.provider}/{target.model}"


async def run_generation_turn(
    *,
    credentials: Credentials,
    guild_id: int | None,
    user_id: int,
    request: ChatRequest,
    sink: MessageSink,
    budget: EditBudget | None = None,
    locale: str | None = None,
    stop_event: Any = None,
    follow_up_event: Any = None,
    tool_loop: ToolLoop | None = None,
    on_first_message: Callable[[SentMessage], object] | None = None,
    on_retry: Callable[[], object] | None = None,
    now: Callable[[], datetime] = utc_now,
    timeout: float | None = PROVIDER_TIMEOUT,
    max_attempts: int = MAX_ATTEMPTS,
) -> TurnOutcome:
    """Answer `request` through the member's route; see the module docstring.

    With `tool_loop`, the request declares its tools and a `function_call` answer runs
    them and streams on into the same reply (`bot.tools.loop`); a failure after the
    tools ran is shown in place, not retried (the answer has already begun).
    `follow_up_event` ends the answer when the member asks something new.
    """
    if tool_loop is not None:
        request = tool_loop.with_tools(request)
    route = await credentials.route(guild_id, user_id)
    outcome = TurnOutcome(blocked=route.blocked)
    if route.blocked is not None or not route.legs:
        await _say(sink, BLOCKED_KEYS.get(route.blocked or "no_route", "chat.not_configured"), locale)
        outcome.blocked = outcome.blocked or "no_route"
        return outcome
    secrets: list[str] = []
    failure: _Failure | None = None
    tried_any_key = False
    for leg_index, leg in enumerate(route.legs):
        for model_index, target in enumerate(leg.chain):
            pool = await credentials.pool(guild_id, leg, target, now())
            key_scoped_only = True
            for key_index, lease in enumerate(pool):
                if _interrupted(follow_up_event):
                    return outcome  # a newer question supersedes this one: no retry, no embed
                if len(outcome.attempts) >= max_attempts or _interrupted(stop_event, follow_up_event):
                    return await _give_up(outcome, failure, sink, locale, secrets, tried_any_key)
                tried_any_key = True
                adapter = _adapter(target, lease, route.verbatim_tool_calling, timeout)
                if adapter is None:
                    break  # this model cannot be built (bad address): the next model
                secrets.append(lease.secret)
                if failure is not None:
                    await failure.delivery.retract()
                    if on_retry is not None:
                        on_retry()  # e.g. show "typing…" again until the retry's first text
                    if failure.leg is leg and key_index > 0:
                        KEY_ROTATIONS.labels(target.provider).inc()
                    failure = None
                delivery = MessageDelivery(sink, budget=budget, on_first_message=on_first_message)
                try:
                    result = await run_stream(
                        normalized_stream(adapter, request), delivery, stop_event=stop_event,
                        follow_up_event=follow_up_event, suppress_errors=True, locale=locale,
                        provider=target.provider, continue_after_calls=tool_loop is not None,
                    )
                    answered = result.error is None
                    if answered and result.status == "function_call" and tool_loop is not None:
                        result = await tool_loop.run(
                            adapter, request, result, delivery, provider=target.provider, locale=locale,
                            stop_event=stop_event, follow_up_event=follow_up_event, sink=sink,
                            render_error=error_embed_renderer(locale=locale, known_secrets=secrets,
                                                              credential_source=leg.credential_source))
                finally:
                    await _close(adapter)
                if answered:
                    await _record_success(credentials, lease, now())
                    stopped = result.status in ("stopped_by_user", "follow_up_interrupt")
                    outcome.attempts.append(Attempt(leg.credential_source, target.provider, target.model,
                                                    lease.masked, "stopped" if stopped else "ok"))
                    outcome.result, outcome.target = result, target
                    outcome.credential_source = leg.credential_source
                    outcome.fallback_used = (leg_index, model_index) != (0, 0)
                    if outcome.fallback_used and not stopped:
                        FALLBACKS_USED.labels(target.provider).inc()
                        await _fallback_notice(sink, leg_index > 0, target, locale)
                    return outcome
                step = plan_next(result.error, now=now(), retry_after=retry_after_seconds(result.error))
                await _record_failure(credentials, lease, step, now())
                outcome.attempts.append(Attempt(leg.credential_source, target.provider, target.model,
                                                lease.masked, step.reason, step.action))
                log.warning("attempt failed: %s %s key %s (%s): %s -> %s", leg.credential_source,
                            target_label(target), lease.masked, result.error.type, step.reason, step.action)
                key_scoped_only = key_scoped_only and step.scope == "key"
                # "Every key of the pool" only means something for a pool of several keys.
                failure = _Failure(delivery, result, result.error, leg, target,
                                   key_scoped_only and key_index == len(pool) - 1 and len(pool) > 1)
                if step.action == "stop":
                    return await _give_up(outcome, failure, sink, locale, secrets, tried_any_key)
                if step.action == "next_model":
                    break
    return await _give_up(outcome, failure, sink, locale, secrets, tried_any_key)


def _interrupted(*events: Any) -> bool:
    return any(event is not None and event.is_set() for event in events)


async def _give_up(outcome: TurnOutcome, failure: _Failure | None, sink: MessageSink,
                   locale: str | None, secrets: list[str], tried_any_key: bool) -> TurnOutcome:
    """Nothing more to try: show the last failure's embed, or say why nothing ran."""
    if failure is None:
        outcome.blocked = "no_usable_key" if not tried_any_key else "no_route"
        await _say(sink, BLOCKED_KEYS[outcome.blocked], locale)
        return outcome
    leg = failure.leg
    render = error_embed_renderer(
        locale=locale, credential_source=leg.credential_source,
        fallback_chain=[target_label(t) for t in leg.chain[1:]] if leg.credential_source == "server" else (),
        rotation_keys_exhausted=failure.rotation_exhausted, known_secrets=secrets,
    )
    delivery = failure.delivery
    if delivery.text.strip():
        await delivery.add_note(interrupted_note(locale))
    try:
        embed = render(failure.error)
    except Exception:  # noqa: BLE001 - the plain embed is better than none
        log.exception("rendering the error embed failed")
        embed = default_error_embed(failure.error, locale)
    failure.result.error_shown = await delivery.send_embed(embed) is not None
    outcome.result, outcome.target = failure.result, failure.target
    outcome.credential_source = leg.credential_source
    return outcome


def _adapter(target: ModelTarget, lease: KeyLease, verbatim: bool, timeout: float | None) -> Any:
    try:
        return create_adapter(target.provider, api_key=lease.secret, model=target.model,
                              base_url=target.base_url, timeout=timeout,
                              verbatim_tool_calling=verbatim and target.provider == "custom")
    except ValueError as exc:  # e.g. custom without an address; the text never holds the key
        log.error("model %s cannot be used: %s", target_label(target), exc)
        return None


async def _close(adapter: Any) -> None:
    closer = getattr(adapter, "aclose", None)
    if closer is not None:
        with contextlib.suppress(Exception):
            await closer()


async def _record_success(credentials: Credentials, lease: KeyLease, when: datetime) -> None:
    try:
        await credentials.succeeded(lease.ref, when)
    except Exception:  # noqa: BLE001 - health bookkeeping must not end the turn
        log.exception("recording a key success (%s) failed", lease.masked)


async def _record_failure(credentials: Credentials, lease: KeyLease, step: Step, when: datetime) -> None:
    """Key-scoped and transient failures count against the key; a model's or the
    content's fault does not."""
    if step.scope not in ("key", "transient"):
        return
    try:
        await credentials.failed(lease.ref, step.reason, when, step.cool_down_until)
    except Exception:  # noqa: BLE001 - health bookkeeping must not end the turn
        log.exception("recording a key failure (%s) failed", lease.masked)


async def _fallback_notice(sink: MessageSink, server_route: bool, target: ModelTarget, locale: str | None) -> None:
    key = "chat.server_fallback_used" if server_route else "chat.fallback_used"
    await _say(sink, key, locale, reply=False, model=target_label(target))


async def _say(sink: MessageSink, key: str, locale: str | None, *, reply: bool = True, **params: Any) -> None:
    with contextlib.suppress(SinkError):
        await sink.send(t(key, locale, **params), reply=reply)
