"""The planner: every failure class maps to one scope, one next step and one cool-down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import openai
import pytest

from bot.turn.policy import (
    BALANCE_COOL_DOWN,
    INVALID_KEY_COOL_DOWN,
    MAX_RETRY_AFTER,
    RATE_LIMIT_COOL_DOWN,
    cool_down_for,
    error_scope,
    plan_next,
    retry_after_seconds,
)
from providers.errors import STREAM_INTERRUPTED, classify_error_body, classify_failure

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def body(provider: str, status: int, message: str, code=None, kind=None, **extra):
    error = {"message": message, **extra}
    if code is not None:
        error["code"] = code
    if kind is not None:
        error["type"] = kind
    return classify_error_body(provider=provider, body={"error": error}, status=status)


CASES = [
    # (name, error, action, scope, reason, cool-down)
    ("rate limit", body("openai", 429, "Rate limit reached for requests", "rate_limit_exceeded"),
     "next_key", "key", "rate_limit", RATE_LIMIT_COOL_DOWN),
    ("anthropic rate limit", body("anthropic", 429, "Number of requests exceeded", kind="rate_limit_error"),
     "next_key", "key", "rate_limit", RATE_LIMIT_COOL_DOWN),
    ("invalid key 401", body("openai", 401, "Incorrect API key provided", "invalid_api_key"),
     "next_key", "key", "invalid_key", INVALID_KEY_COOL_DOWN),
    ("revoked key 403", body("google", 403, "Permission denied on resource", kind="PERMISSION_DENIED"),
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
     "next_key", "key", "credit_limit", timedelta(minutes=15)),
    ("bare 402", body("openai", 402, "Payment required"),
     "next_key", "key", "billing", BALANCE_COOL_DOWN),
    ("overloaded 529", body("anthropic", 529, "Overloaded", kind="overloaded_error"),
     "next_key", "transient", "provider_overloaded", None),
    ("server error 500", body("openai", 500, "The server had an error", kind="server_error"),
     "next_key", "transient", "provider_overloaded", None),
    ("gateway timeout 504", body("openrouter", 504, "upstream timed out"),
     "next_key", "transient", "timeout", None),
    ("client timeout", classify_failure(provider="openai", message="Request timed out.", timeout=True),
     "next_key", "transient", "timeout", None),
    ("cut stream", classify_failure(provider="openai", message="peer closed connection",
                                    error_type=STREAM_INTERRUPTED),
     "next_key", "transient", "provider_overloaded", None),
    ("anthropic api_error", body("anthropic", 200, "Internal server error", kind="api_error"),
     "next_key", "transient", "api_error", None),
    ("unknown model", body("openai", 404, "The model `gpt-9` does not exist", "model_not_found"),
     "next_model", "model", "model_error", None),
    ("gemini model 404", body("google", 404, "models/gemini-0 is not found for API version v1beta",
                              kind="NOT_FOUND"),
     "next_model", "model", "model_error", None),
    ("context length", body("openai", 400, "This model's maximum context length is 8192 tokens",
                            "context_length_exceeded"),
     "next_model", "model", "context_length", None),
    ("refused request", body("openai", 400, "Invalid value for 'temperature'", kind="invalid_request_error"),
     "next_model", "model", "request_refused", None),
    ("content filter", body("openai", 400, "The response was filtered", "content_filter"),
     "stop", "stop", "content_blocked", None),
    ("safety system", body("openai", 400, "Your request was rejected as a result of our safety system"),
     "stop", "stop", "content_blocked", None),
]


@pytest.mark.parametrize(("name", "error", "action", "scope", "reason", "rest"), CASES,
                         ids=[c[0] for c in CASES])
def test_plan_for_every_failure_class(name, error, action, scope, reason, rest):
    step = plan_next(error, now=NOW)
    assert (step.action, step.scope, step.reason) == (action, scope, reason)
    assert error_scope(error) == (scope, reason)
    assert step.cool_down_until == (NOW + rest if rest is not None else None)


def test_every_error_type_is_covered_by_the_table():
    assert {c[1].type for c in CASES} == {
        "api_error", "rate_limit", "content_blocked", "timeout", "provider_overloaded", "model_error"}
    assert {c[3] for c in CASES} == {"key", "transient", "model", "stop"}


def test_retry_after_sets_the_rate_limit_cool_down_and_is_bounded():
    error = body("openai", 429, "Rate limit reached", "rate_limit_exceeded")
    assert plan_next(error, now=NOW, retry_after=7.5).cool_down_until == NOW + timedelta(seconds=7.5)
    assert plan_next(error, now=NOW, retry_after=10**9).cool_down_until == NOW + MAX_RETRY_AFTER
    assert plan_next(error, now=NOW, retry_after=0).cool_down_until == NOW + RATE_LIMIT_COOL_DOWN
    # Retry-After never shortens a billing cool-down, and transient errors never rest a key.
    balance = body("deepseek", 402, "Insufficient Balance")
    assert plan_next(balance, now=NOW, retry_after=3).cool_down_until == NOW + BALANCE_COOL_DOWN
    assert cool_down_for("provider_overloaded", 30) is None


def _sdk_rate_limit(headers: dict[str, str]) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("rate limited", response=response, body=None)


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "12"}, 12.0),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None),
    ({}, None),
])
def test_retry_after_read_from_the_sdk_response(headers, expected):
    exc = _sdk_rate_limit(headers)
    error = classify_failure(provider="openai", message="rate limited", status=429, original_error=exc)
    assert retry_after_seconds(error) == expected


def test_retry_after_read_from_gemini_retry_info():
    details = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
               {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}]
    error = classify_error_body(provider="google", status=429, body={"error": {
        "code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED",
        "details": details}})
    assert error.type == "rate_limit"
    assert retry_after_seconds(error) == 31.0
    assert plan_next(error, now=NOW, retry_after=retry_after_seconds(error)).cool_down_until == (
        NOW + timedelta(seconds=31))
