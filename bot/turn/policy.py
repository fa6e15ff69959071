"""What to try after a failed attempt: a table lookup on the failure's kind.

Pure: a function of the classified `ProviderError` and a time the caller passes in; no
I/O, no clock, no state. The runner walks models x keys and asks `plan_next` after each
failure. The step's reason is the failure kind itself, the word key health records.

Scopes:
- ``key``: the key itself failed (invalid or revoked, rate limit, balance, billing): the
  next key of the pool, and this key cools down.
- ``transient``: the provider had a bad moment (overloaded, 5xx, timeout, a cut stream):
  the next key, then the next model; the key is not blamed with a cool-down.
- ``model``: the model cannot serve this request (unknown model, context too long, a
  request the provider refuses), or its address cannot be reached or is refused: the
  next model, never the next key (every key of a model goes to the same address, so
  the next one would fail the same way; no key rests, none is to blame).
- ``stop``: content was blocked; another key or model must not be used to get round it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from providers.types import FailureKind, ProviderError

Scope = Literal["key", "transient", "model", "stop"]
Action = Literal["next_key", "next_model", "stop"]

# How long a key rests after failing for its own reasons.
RATE_LIMIT_COOL_DOWN = timedelta(seconds=60)
MAX_RETRY_AFTER = timedelta(hours=24)  # a bogus Retry-After must not bench a key for ever
BALANCE_COOL_DOWN = timedelta(hours=6)
AFFORDABILITY_COOL_DOWN = timedelta(minutes=15)
INVALID_KEY_COOL_DOWN = timedelta(hours=1)

# kind -> (scope, how long the key rests; None = not at all)
SCOPES: dict[FailureKind, tuple[Scope, timedelta | None]] = {
    "rate_limit": ("key", RATE_LIMIT_COOL_DOWN),
    "balance_exhausted": ("key", BALANCE_COOL_DOWN),
    "billing": ("key", BALANCE_COOL_DOWN),
    "credit_limit": ("key", AFFORDABILITY_COOL_DOWN),
    "invalid_key": ("key", INVALID_KEY_COOL_DOWN),
    "overloaded": ("transient", None),
    "timeout": ("transient", None),
    "transient": ("transient", None),
    "model_error": ("model", None),
    "context_length": ("model", None),
    "request_refused": ("model", None),
    "unreachable": ("model", None),
    "address_refused": ("model", None),
    "not_found": ("model", None),
    "content_blocked": ("stop", None),
}
_SPARES_THE_KEY: tuple[Scope, timedelta | None] = ("model", None)
_ACTIONS: dict[Scope, Action] = {
    "key": "next_key", "transient": "next_key", "model": "next_model", "stop": "stop",
}


@dataclass(frozen=True, slots=True)
class Step:
    """The planner's answer: what to do next, why, and until when the key rests."""

    action: Action
    scope: Scope
    reason: str
    cool_down_until: datetime | None = None


def _kind(error: ProviderError) -> FailureKind:
    return error.kind or ("transient" if error.retryable else "request_refused")


def error_scope(error: ProviderError) -> tuple[Scope, str]:
    """(scope, reason) of a failure; the reason is its kind, a short stable word."""
    kind = _kind(error)
    return SCOPES[kind][0], kind


def cool_down_for(kind: str, retry_after: float | None) -> timedelta | None:
    """How long a key rests after failing; a rate limit rests as long as the provider asked
    (bounded), anything else as long as its kind says; None for kinds that spare the key."""
    scope, rest = SCOPES.get(kind, _SPARES_THE_KEY)
    if scope != "key":
        return None
    if kind == "rate_limit" and retry_after is not None and retry_after > 0:
        return timedelta(seconds=min(retry_after, MAX_RETRY_AFTER.total_seconds()))
    return rest


def plan_next(error: ProviderError, *, now: datetime) -> Step:
    """The next step after `error`; a rate-limited key rests as long as the provider asked
    (`error.retry_after`), bounded."""
    scope, kind = error_scope(error)
    rest = cool_down_for(kind, error.retry_after)
    return Step(_ACTIONS[scope], scope, kind, now + rest if rest is not None else None)

