"""The planner: every failure kind maps to one scope, one next step and one cool-down."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.turn.policy import (
    AFFORDABILITY_COOL_DOWN,
    BALANCE_COOL_DOWN,
    INVALID_KEY_COOL_DOWN,
    MAX_RETRY_AFTER,
    RATE_LIMIT_COOL_DOWN,
    SCOPES,
    cool_down_for,
    error_scope,
    plan_next,
)
from providers.errors import STREAM_INTERRUPTED, classify_error_body, classify_failure
from providers.safe_transport import AddressRefused
from providers.types import FAILURE_KINDS, ProviderError

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def body(provider: str, status: int, message: str, code=None, kind=None, **extra):
    error = {"message": message, **extra}
    if code is not None:
        error["code"] = code
    if kind is not None:
        error["type"] = kind
    return classify_error_body(provider=provider, body={"error": error}, status=status)


GEMINI_RETRY_INFO = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]

CASES = [
    # (name, error, action, scope, reason, cool-down)
    ("rate limit", body("openai", 429, "Rate limit reached for requests", "rate_limit_exceeded"),
     "next_key", "key", "rate_limit", RATE_LIMIT_COOL_DOWN),
    ("anthropic rate limit", body("anthropic", 429, "Number of requests exceeded", kind="rate_limit_error"),
     "next_key", "key", "rate_limit", RATE_LIMIT_COOL_DOWN),
    ("gemini per-minute quota rests as long as it asked",
     body("google", 429, "You exceeded your current quota, please check your plan and billing details.",
          kind="RESOURCE_EXHAUSTED", details=GEMINI_RETRY_INFO),
     "next_key", "key", "rate_limit", timedelta(seconds=37)),
    ("invalid key 401", body("openai", 401, "Incorrect API key provided", "invalid_api_key"),
     "next_key", "key", "invalid_key", INVALID_KEY_COOL_DOWN),
    ("revoked key 403", body("google", 403, "Permission denied on resource", kind="PERMISSION_DENIED"),
     "next_key", "key", "invalid_key", INVALID_KEY_COOL_DOWN),
    ("gemini invalid key 400", body("google", 400, "API key not valid. Please pass a valid API key.",
                                    kind="INVALID_ARGUMENT"),
     "next_key", "key", "invalid_key", INVALID_KEY_COOL_DOWN),
    ("deepseek balance 402", body("deepseek", 402, "Insufficient Balance"),
     "next_key", "key", "balance_exhausted", BALANCE_COOL_DOWN),
    ("zai 1113 under 429", body("zai", 429, "余额不足或无可用资源包,请充值。", "1113"),
     "next_key", "key", "balance_exhausted", BALANCE_COOL_DOWN),
    ("openai quota under 429", body("openai", 429, "You exceeded your current quota", "insufficient_quota"),
     "next_key", "key", "balance_exhausted", BALANCE_COOL_DOWN),
    ("anthropic credit balance", body("anthropic", 400, "Your credit balance is too low to access the API",
                                      kind="invalid_request_error"),
     "next_key", "key", "balance_exhausted", BALANCE_COOL_DOWN),
    ("openrouter affordability", body("openrouter", 402, "This request requires more credits, or fewer "
                                      "max_tokens. You requested up to 4000 tokens, but can only afford 1200."),
     "next_key", "key", "credit_limit", AFFORDABILITY_COOL_DOWN),
    ("bare 402", body("openai", 402, "Payment required"),
     "next_key", "key", "billing", BALANCE_COOL_DOWN),
    ("plan without the model (zai 1311 under 429)",
     body("zai", 429, "Your current subscription plan does not yet include access to GLM-5", "1311"),
     "next_key", "key", "billing", BALANCE_COOL_DOWN),
    ("overloaded 529", body("anthropic", 529, "Overloaded", kind="overloaded_error"),
     "next_key", "transient", "overloaded", None),
    ("server error 500", body("openai", 500, "The server had an error", kind="server_error"),
     "next_key", "transient", "overloaded", None),
    ("gateway timeout 504", body("openrouter", 504, "upstream timed out"),
     "next_key", "transient", "timeout", None),
    ("client timeout", classify_failure(provider="openai", message="Request timed out.", timeout=True),
     "next_key", "transient", "timeout", None),
    ("cut stream", classify_failure(provider="openai", message="peer closed connection",
                                    error_type=STREAM_INTERRUPTED),
     "next_key", "transient", "transient", None),
    ("unknown model", body("openai", 404, "The model `gpt-9` does not exist", "model_not_found"),
     "next_model", "model", "model_error", None),
    ("gemini model 404", body("google", 404, "models/gemini-0 is not found for API version v1beta",
                              kind="NOT_FOUND"),
     "next_model", "model", "model_error", None),
    ("context length", body("openai", 400, "This model's maximum context length is 8192 tokens",
                            "context_length_exceeded"),
     "next_model", "model", "context_length", None),
    ("wrong base URL", body("custom", 404, "404 page not found"), "next_model", "model", "not_found", None),
    ("refused request", body("openai", 400, "Invalid value for 'temperature'", kind="invalid_request_error"),
     "next_model", "model", "request_refused", None),
    ("unreachable endpoint", classify_failure(provider="custom", message="connection failed: refused",
                                              connection_failed=True),
     "next_model", "model", "unreachable", None),
    ("refused address", classify_failure(provider="custom", message="connection refused before sending",
                                         original_error=AddressRefused("private", "10.0.0.5 is a private address")),
     "next_model", "model", "address_refused", None),
    ("content filter", body("openai", 400, "The response was filtered", "content_filter"),
     "stop", "stop", "content_blocked", None),
    ("safety system", body("openai", 400, "Your request was rejected as a result of our safety system"),
     "stop", "stop", "content_blocked", None),
]


@pytest.mark.parametrize(("name", "error", "action", "scope", "reason", "rest"), CASES,
                         ids=[c[0] for c in CASES])
def test_plan_for_every_failure_kind(name, error, action, scope, reason, rest):
    step = plan_next(error, now=NOW)
    assert (step.action, step.scope, step.reason) == (action, scope, reason)
    assert error_scope(error) == (scope, reason)
    assert step.cool_down_until == (NOW + rest if rest is not None else None)


def test_every_kind_has_a_scope_and_the_table_reaches_every_kind():
    assert set(SCOPES) == FAILURE_KINDS
    assert {c[4] for c in CASES} == FAILURE_KINDS
    assert {scope for scope, _ in SCOPES.values()} == {"key", "transient", "model", "stop"}
    # Only a key's own failures rest it.
    assert {kind for kind, (scope, rest) in SCOPES.items() if rest is not None} == {
        kind for kind, (scope, _) in SCOPES.items() if scope == "key"}


def test_the_wait_the_provider_asked_for_sets_the_rate_limit_cool_down_and_is_bounded():
    error = body("openai", 429, "Rate limit reached", "rate_limit_exceeded")
    assert error.retry_after is None
    assert plan_next(error, now=NOW).cool_down_until == NOW + RATE_LIMIT_COOL_DOWN
    error = replace(error, retry_after=7.5)
    assert plan_next(error, now=NOW).cool_down_until == NOW + timedelta(seconds=7.5)
    error = replace(error, retry_after=1e300)  # a bogus header must neither bench the key for ever nor overflow
    assert plan_next(error, now=NOW).cool_down_until == NOW + MAX_RETRY_AFTER
    error = replace(error, retry_after=0)
    assert plan_next(error, now=NOW).cool_down_until == NOW + RATE_LIMIT_COOL_DOWN


def test_a_wait_never_shortens_a_billing_rest_and_never_rests_a_key_for_transient_failures():
    balance = body("deepseek", 402, "Insufficient Balance")
    balance = replace(balance, retry_after=3)
    assert plan_next(balance, now=NOW).cool_down_until == NOW + BALANCE_COOL_DOWN
    plan = body("zai", 429, "Your current subscription plan does not yet include access to GLM-5", "1311")
    plan = replace(plan, retry_after=3)
    assert plan_next(plan, now=NOW).cool_down_until == NOW + BALANCE_COOL_DOWN
    overloaded = body("anthropic", 529, "Overloaded", kind="overloaded_error")
    overloaded = replace(overloaded, retry_after=30)
    assert plan_next(overloaded, now=NOW).cool_down_until is None
    assert cool_down_for("overloaded", 30) is None and cool_down_for("not-a-kind", 30) is None


def test_an_error_made_without_classification_still_gets_a_plan():
    """Errors the stream makes itself (an idle timeout, an internal failure) carry a kind too."""
    idle = ProviderError(type="timeout", message="no data", retryable=True, code="stream_idle_timeout")
    assert plan_next(idle, now=NOW).action == "next_key" and error_scope(idle) == ("transient", "timeout")
    internal = ProviderError(type="api_error", message="bug", retryable=False, code="stream_internal")
    assert error_scope(internal) == ("model", "request_refused")
