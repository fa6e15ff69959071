"""Decide what failed (`FailureKind`), once, from the most exact evidence there is.

Order: a client-side timeout; an address the bot itself refused; a connection that
never opened (unreachable); the provider's own codes; Gemini's structured details;
the words that name a specific cause; the HTTP status; then what is left. Codes and
details are exact, so they are read first: Gemini's per-minute quota 429 says "You
exceeded your current quota" (balance wording) but its QuotaFailure and RetryInfo say
it is a rate limit, and OpenAI's `insufficient_quota` is an empty balance whatever its
status. A status alone is a family (429 may be a rate limit, an empty balance or a plan
without the model), so specific wording narrows it before the status decides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from providers.error_body import walk
from providers.failure_wording import INVALID_KEY, PLAN_EXCLUDES_MODEL, kind_from_wording
from providers.identity import Provider
from providers.types import ErrorType, FailureKind

# error_type an adapter passes for a body that stopped arriving mid-stream (reset, cut).
STREAM_INTERRUPTED = "stream_interrupted"

# The chunk contract's coarse type and `retryable`, which follow from the kind.
KIND_TYPE: dict[FailureKind, tuple[ErrorType, bool]] = {
    "rate_limit": ("rate_limit", True),
    "balance_exhausted": ("api_error", False),
    "credit_limit": ("api_error", False),
    "billing": ("api_error", False),
    "invalid_key": ("api_error", False),
    "model_error": ("model_error", False),
    "context_length": ("api_error", False),
    "content_blocked": ("content_blocked", False),
    "timeout": ("timeout", True),
    "overloaded": ("provider_overloaded", True),
    "transient": ("provider_overloaded", True),
    "unreachable": ("api_error", False),
    "address_refused": ("api_error", False),
    "not_found": ("api_error", False),
    "request_refused": ("api_error", False),
}

# Provider codes and type words (lower-cased) that name the failure exactly.
_CODE_KINDS: dict[str, FailureKind] = {
    "model_not_found": "model_error",
    "model_not_available": "model_error",
    "unsupported_model": "model_error",
    "content_filter": "content_blocked",
    "content_policy_violation": "content_blocked",
    "content_blocked": "content_blocked",
    "insufficient_quota": "balance_exhausted",
    "insufficient_user_quota": "balance_exhausted",
    "1113": "balance_exhausted",  # Z.ai, also when relayed by a custom endpoint
    "context_length_exceeded": "context_length",
    "invalid_api_key": "invalid_key",
    "authentication_error": "invalid_key",
    "permission_error": "invalid_key",
    "rate_limit_error": "rate_limit",
    "rate_limit_exceeded": "rate_limit",
    "overloaded_error": "overloaded",
    "overloaded": "overloaded",
    "server_error": "overloaded",
    "unavailable": "overloaded",
    "api_error": "overloaded",  # Anthropic: an internal error of its own systems
}
# Z.ai business codes read only from Z.ai: 1302/1303 request or concurrency limits,
# 1308 the coding plan's usage cap, 1311 a plan that does not include the model.
_ZAI_CODE_KINDS: dict[str, FailureKind] = {
    "1302": "rate_limit", "1303": "rate_limit", "1308": "rate_limit", "1311": "billing",
}
# Gemini ErrorInfo reasons that blame the key (or the project behind it).
_KEY_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED", "ACCESS_TOKEN_TYPE_UNSUPPORTED",
                          "SERVICE_DISABLED"})
_PER_MINUTE = re.compile(r"per[_ ]?minute", re.IGNORECASE)
_RPC = "type.googleapis.com/google.rpc."


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything known about one failure, already normalized."""

    provider: str
    status: int | None  # the HTTP status (or a numeric body code standing in for it)
    codes: tuple[str, ...]  # the provider's code, then its type word, lower-cased
    message: str
    text: str  # every text the failure carries, for wording checks
    details: Any = None
    timeout: bool = False
    connection_failed: bool = False
    refused_address: str | None = None  # why the bot refused the address ("private", "metadata")
    address: str | None = None  # the request's host and path (no query: a key may ride there)
    sources: tuple[Any, ...] = ()  # the structured bodies (details, the provider's body)


def _from_codes(ev: Evidence) -> FailureKind | None:
    for code in ev.codes:
        if code in _CODE_KINDS:
            return _CODE_KINDS[code]
        if ev.provider == Provider.ZAI and code in _ZAI_CODE_KINDS:
            return _ZAI_CODE_KINDS[code]
    if "not_found_error" in ev.codes and ev.message.strip().lower().startswith("model:"):
        return "model_error"  # Anthropic names the unknown model as "model: <id>"
    return None


def _rpc_details(details: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(short @type, entry) of every google.rpc detail, e.g. ("RetryInfo", {...})."""
    found = [details] if isinstance(details, Mapping) else []
    found += [value for _, value in walk(details) if isinstance(value, Mapping)]
    return [(entry["@type"].removeprefix(_RPC), entry) for entry in found
            if isinstance(entry.get("@type"), str) and entry["@type"].startswith(_RPC)]


def _per_minute_quota(entry: Mapping[str, Any]) -> bool:
    violations = entry.get("violations")
    if not isinstance(violations, list):
        return False
    return any(isinstance(v, Mapping) and any(
        isinstance(v.get(field), str) and _PER_MINUTE.search(v[field])
        for field in ("quotaId", "quotaMetric")) for v in violations)


def _says_rate_limit(short_type: str, entry: Mapping[str, Any]) -> bool:
    return (short_type == "RetryInfo"
            or short_type == "QuotaFailure" and _per_minute_quota(entry)
            or short_type == "ErrorInfo" and entry.get("reason") == "RATE_LIMIT_EXCEEDED")


def _from_details(ev: Evidence) -> FailureKind | None:
    """Gemini's google.rpc details: a per-minute quota, any RetryInfo or a RATE_LIMIT_EXCEEDED
    reason on a 429 is a rate limit; an ErrorInfo reason about the key blames the key."""
    exhausted = ev.status == 429 or "resource_exhausted" in ev.codes
    for short_type, entry in _rpc_details(ev.details):
        if exhausted and _says_rate_limit(short_type, entry):
            return "rate_limit"
        if short_type == "ErrorInfo" and entry.get("reason") in _KEY_REASONS:
            return "invalid_key"
    return None


def _from_status(status: int | None) -> FailureKind | None:
    if status == 429:
        return "rate_limit"
    if status == 402:
        return "billing"
    if status == 404:  # nothing before named a model: the address itself is not there
        return "not_found"
    if status in (401, 403):
        return "invalid_key"
    if status in (408, 504):
        return "timeout"
    if status is not None and 500 <= status <= 599:
        return "overloaded"
    return None


def decide_kind(ev: Evidence) -> FailureKind:
    """The one classification of a failure; see the module docstring for the order."""
    if ev.timeout:
        return "timeout"
    if ev.refused_address is not None:
        return "address_refused"
    if ev.connection_failed and ev.status is None:
        return "unreachable"
    kind = _from_codes(ev) or _from_details(ev) or kind_from_wording(ev.text) or _from_status(ev.status)
    if kind is not None:
        return kind
    if STREAM_INTERRUPTED in ev.codes and not ev.connection_failed:
        return "transient"  # the body was cut: the same request may well succeed
    return "request_refused"


Reason = tuple[str | None, dict[str, str] | None]
_AFFORD = re.compile(
    r"requested up to (?P<requested>\d+) tokens?, but can only afford (?P<affordable>\d+)",
    re.IGNORECASE,
)


def _structured_string(sources: tuple[Any, ...], wanted: str) -> str | None:
    """The first non-empty string under key `wanted` in the structured bodies."""
    for source in sources:
        for key, value in walk(source):
            if key == wanted and isinstance(value, str) and value.strip():
                return value.strip()
    return None


def decide_reason(kind: FailureKind, ev: Evidence) -> Reason:
    """The finer cause of a `kind` and the values a headline names, from the same evidence,
    so presentation reads them instead of scanning the text again."""
    if kind == "address_refused":
        return f"{ev.refused_address}_address", None
    if kind == "not_found":
        return None, {"address": ev.address} if ev.address else None
    if "ACCESS_TOKEN_TYPE_UNSUPPORTED" in ev.text:
        return "google_credential_type", None
    if kind == "invalid_key":
        if "SERVICE_DISABLED" in ev.text:
            return "google_api_disabled", None
        if ev.status == 403 and not INVALID_KEY.search(ev.text):
            return "permission_denied", None
    if kind == "billing" and PLAN_EXCLUDES_MODEL.search(ev.text):
        return "plan_excludes_model", None
    if ev.provider != Provider.OPENROUTER:
        return None, None
    if kind == "credit_limit":
        match = _AFFORD.search(ev.text)
        return ("affordable_tokens", match.groupdict()) if match else (None, None)
    if kind == "rate_limit":
        reason = "daily_free_cap" if "free-models-per-day" in ev.text else None
        upstream = _structured_string(ev.sources, "provider_name")
        return reason, {"upstream": upstream} if upstream else None
    return None, None
