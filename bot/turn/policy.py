"""What to try after a failed attempt, decided by the failure's scope (spec §7).

Pure: a function of the classified `ProviderError` and a time the caller passes in; no
I/O, no clock, no state. The runner walks models x keys and asks `plan_next` after each
failure.

Scopes:
- ``key``: the key itself failed (invalid or revoked, rate limit, quota, billing): the
  next key of the pool, and this key cools down.
- ``transient``: the provider had a bad moment (overloaded, 5xx, timeout): the next key,
  then the next model; the key is not blamed with a cool-down.
- ``model``: the model cannot serve this request (unknown model, context too long, a
  request the provider refuses): the next model, never the next key.
- ``stop``: content was blocked; another key or model must not be used to get round it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from providers.errors import (
    is_account_balance_exhausted_error,
    is_context_length_error,
    is_credit_affordability_error,
    is_provider_model_error,
)
from providers.types import ProviderError

Scope = Literal["key", "transient", "model", "stop"]
Action = Literal["next_key", "next_model", "stop"]

# How long a key rests after failing for its own reasons.
RATE_LIMIT_COOL_DOWN = timedelta(seconds=60)
MAX_RETRY_AFTER = timedelta(hours=24)  # a bogus Retry-After must not bench a key for ever
BALANCE_COOL_DOWN = timedelta(hours=6)
AFFORDABILITY_COOL_DOWN = timedelta(minutes=15)
INVALID_KEY_COOL_DOWN = timedelta(hours=1)
KEY_STATUSES = frozenset({401, 403})
BILLING_STATUSES = frozenset({402})

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*s\s*$")


@dataclass(frozen=True, slots=True)
class Step:
    """The planner's answer: what to do next, why, and until when the key rests."""

    action: Action
    scope: Scope
    reason: str
    cool_down_until: datetime | None = None


def error_scope(error: ProviderError) -> tuple[Scope, str]:
    """(scope, reason) of a failure; the reason is a short stable word for key health."""
    if error.type == "content_blocked":
        return "stop", "content_blocked"
    if error.type == "model_error" or is_provider_model_error(error):
        return "model", "model_error"
    if is_context_length_error(error):
        return "model", "context_length"
    if is_account_balance_exhausted_error(error):
        return "key", "balance_exhausted"
    if is_credit_affordability_error(error):
        return "key", "credit_limit"
    if error.type == "rate_limit":
        return "key", "rate_limit"
    if error.type in ("provider_overloaded", "timeout"):
        return "transient", error.type
    if error.status in KEY_STATUSES:
        return "key", "invalid_key"
    if error.status in BILLING_STATUSES or error.status == 429:  # a 429 re-coded as billing
        return "key", "billing"
    if error.retryable:
        return "transient", error.type
    return "model", "request_refused"


def cool_down_for(reason: str, retry_after: float | None) -> timedelta | None:
    """How long a key rests after a key-scoped failure; None for other scopes."""
    if reason == "rate_limit":
        if retry_after is not None and retry_after > 0:
            return min(timedelta(seconds=retry_after), MAX_RETRY_AFTER)
        return RATE_LIMIT_COOL_DOWN
    if reason in ("balance_exhausted", "billing"):
        return BALANCE_COOL_DOWN
    if reason == "credit_limit":
        return AFFORDABILITY_COOL_DOWN
    if reason == "invalid_key":
        return INVALID_KEY_COOL_DOWN
    return None


def plan_next(error: ProviderError, *, now: datetime, retry_after: float | None = None) -> Step:
    """The next step after `error`; `retry_after` (seconds) is what the provider asked for."""
    scope, reason = error_scope(error)
    if scope == "stop":
        return Step("stop", scope, reason)
    if scope == "model":
        return Step("next_model", scope, reason)
    rest = cool_down_for(reason, retry_after) if scope == "key" else None
    return Step("next_key", scope, reason, now + rest if rest is not None else None)


def retry_after_seconds(error: ProviderError) -> float | None:
    """Seconds the provider asked us to wait: a Retry-After(-ms) header on the SDK error's
    response, or Gemini's RetryInfo `retryDelay` ("30s") in the error details."""
    response = getattr(error.original_error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        try:
            millis = headers.get("retry-after-ms")
            if millis is not None:
                return max(0.0, float(millis) / 1000)
            seconds = headers.get("retry-after")
            if seconds is not None:
                return max(0.0, float(seconds))
        except (TypeError, ValueError):
            pass  # an HTTP date or garbage: fall through to the details
    return _retry_delay(error.details)


def _retry_delay(details: Any, depth: int = 0) -> float | None:
    if depth > 4:
        return None
    if isinstance(details, Mapping):
        delay = details.get("retryDelay")
        if isinstance(delay, str) and (match := _DURATION.match(delay)):
            return float(match.group(1))
        values: Any = details.values()
    elif isinstance(details, list):
        values = details
    else:
        return None
    for value in values:
        found = _retry_delay(value, depth + 1)
        if found is not None:
            return found
    return None
