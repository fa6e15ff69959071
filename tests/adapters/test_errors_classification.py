"""Classification: every failure gets one kind, decided once, codes and details before words.

The corpus table covers every recorded error body; the suite's own bodies cover each
rule without the corpus. `type` and `retryable` always follow from the kind.
"""

from __future__ import annotations

import json

import pytest
from prometheus_client import REGISTRY

from providers.errors import (
    STREAM_INTERRUPTED,
    classify_error_body,
    classify_failure,
    error_fields,
)
from providers.failure_kind import KIND_TYPE
from providers.redaction import REDACTED
from providers.safe_transport import AddressRefused
from providers.types import FAILURE_KINDS
from tests.support.data_errors import GEMINI_PER_MINUTE_429, ZAI_PLAN_EXCLUDES_MODEL_429
from tests.support.env_corpus import CORPUS, corpus_errors, requires_corpus

# name -> (kind, type, retryable)
CORPUS_EXPECTED: dict[str, tuple[str, str, bool]] = {
    "anthropic_400_invalid_request_effort": ("request_refused", "api_error", False),
    "anthropic_400_prompt_too_long": ("context_length", "api_error", False),
    "anthropic_404_not_found_model": ("model_error", "model_error", False),
    "anthropic_429_rate_limit_error": ("rate_limit", "rate_limit", True),
    "anthropic_529_overloaded_error": ("overloaded", "provider_overloaded", True),
    "deepseek_402_insufficient_balance": ("balance_exhausted", "api_error", False),
    "gemini_400_api_key_invalid": ("invalid_key", "api_error", False),
    "gemini_400_invalid_argument": ("request_refused", "api_error", False),
    "gemini_403_api_not_enabled": ("invalid_key", "api_error", False),
    "gemini_404_model_not_found": ("model_error", "model_error", False),
    "gemini_404_model_not_found_v1": ("model_error", "model_error", False),
    # No QuotaFailure, no RetryInfo: only the words are left, and they say "quota".
    "gemini_429_resource_exhausted_help_only": ("balance_exhausted", "api_error", False),
    # Same words, but a per-minute QuotaFailure and a RetryInfo: a rate limit.
    "gemini_429_resource_exhausted_quota_retryinfo": ("rate_limit", "rate_limit", True),
    "gemini_503_unavailable_high_demand": ("overloaded", "provider_overloaded", True),
    "gemini_503_unavailable_overloaded": ("overloaded", "provider_overloaded", True),
    "groq_400_context_length_exceeded": ("context_length", "api_error", False),
    "groq_404_model_not_found": ("model_error", "model_error", False),
    "openai_400_context_length_exceeded": ("context_length", "api_error", False),
    "openai_400_unsupported_value": ("request_refused", "api_error", False),
    "openai_401_invalid_api_key": ("invalid_key", "api_error", False),
    "openai_404_model_not_found": ("model_error", "model_error", False),
    "openai_429_insufficient_quota": ("balance_exhausted", "api_error", False),
    "openai_429_rate_limit_exceeded_tpm": ("rate_limit", "rate_limit", True),
    "openai_429_request_too_large_tpm": ("rate_limit", "rate_limit", True),
    "openrouter_400_invalid_model_id": ("model_error", "model_error", False),
    "openrouter_402_insufficient_credits": ("credit_limit", "api_error", False),
    "openrouter_429_upstream_rate_limited": ("rate_limit", "rate_limit", True),
    "zai_429_1113_insufficient_balance": ("balance_exhausted", "api_error", False),
    "zai_429_1113_insufficient_balance_cn": ("balance_exhausted", "api_error", False),
    "zai_429_1302_high_concurrency": ("rate_limit", "rate_limit", True),
    "zai_429_1302_rate_limit_reached": ("rate_limit", "rate_limit", True),
    "zai_429_1308_usage_cap": ("rate_limit", "rate_limit", True),
}


def load_error(name: str) -> dict:
    assert CORPUS is not None
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))


def wire_body(sidecar: dict) -> dict:
    """The exact bytes the provider sent when the corpus has them, else the stored object."""
    return json.loads(sidecar["body_text"]) if sidecar.get("body_text") else sidecar["body"]


@requires_corpus
def test_every_corpus_error_body_has_an_expectation():
    names = {n.removeprefix("errors/") for n in corpus_errors()}
    assert names == set(CORPUS_EXPECTED)


@requires_corpus
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_error_body_classified(name):
    sidecar = load_error(f"errors/{name}")
    body = wire_body(sidecar)
    err = classify_error_body(provider=sidecar["provider"], body=body, status=sidecar["status"])
    assert (err.kind, err.type, err.retryable) == CORPUS_EXPECTED[name]
    assert err.status == sidecar["status"]
    assert err.provider == sidecar["provider"]
    assert err.original_error == body
    code = body.get("error", {}).get("code")
    assert err.code == (str(code) if code is not None else str(sidecar["status"]))
    if err.kind == "model_error":
        assert err.details is not None


@requires_corpus
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_error_body_same_midstream_when_code_is_numeric(name):
    """A numeric code in a mid-stream body stands in for the HTTP status."""
    sidecar = load_error(f"errors/{name}")
    body = sidecar["body"]
    code = body.get("error", {}).get("code")
    midstream = classify_error_body(provider=sidecar["provider"], body=body, status=None)
    http = classify_error_body(provider=sidecar["provider"], body=body, status=sidecar["status"])
    if str(code) == str(sidecar["status"]) or sidecar["provider"] == "zai":
        assert midstream.kind == http.kind


# ---- the suite's own bodies: one per rule -----------------------------------------------------
OWN_CASES = [
    # (description, kwargs, kind)
    ("a bare 404: the address, not the key", dict(status=404, message="404 page not found"), "not_found"),
    ("OpenRouter: no upstream for what was asked", dict(status=404, message="No endpoints found that support tool use."),
     "model_error"),
    ("model 404", dict(status=404, message="The model `gpt-9` does not exist or you do not have access to it."),
     "model_error"),
    ("model 503 unavailable wins over 5xx",
     dict(status=503, message="Model foo-large is unavailable right now"), "model_error"),
    ("model code", dict(status=400, message="bad", code="model_not_found"), "model_error"),
    ("anthropic unknown model", dict(status=404, message="model: claude-x", error_type="not_found_error"),
     "model_error"),
    ("deprecated model", dict(status=400, message="This model has been deprecated."), "model_error"),
    ("deprecated parameter is not a model error",
     dict(status=400, message="The parameter 'functions' is deprecated."), "request_refused"),
    ("content filter", dict(status=400, message="Blocked by the content filter"), "content_blocked"),
    ("content policy code", dict(status=400, message="x", code="content_policy_violation"), "content_blocked"),
    ("the word content alone", dict(status=400, message="messages[1].content must be a string"),
     "request_refused"),
    ("429 plain", dict(status=429, message="slow down"), "rate_limit"),
    ("rate-limit code wins over quota words",
     dict(status=429, message="You exceeded your current quota; retry in 2s", code="rate_limit_exceeded"),
     "rate_limit"),
    ("429 insufficient_quota code", dict(status=429, message="x", code="insufficient_quota"),
     "balance_exhausted"),
    ("429 zai 1113 numeric", dict(status=429, message="whatever", code=1113), "balance_exhausted"),
    ("429 affordability", dict(status=429, message="This request requires more credits"), "credit_limit"),
    ("429 quota words", dict(status=429, message="You exceeded your current quota"), "balance_exhausted"),
    ("402", dict(status=402, message="Payment required"), "billing"),
    ("402 balance words", dict(status=402, message="Insufficient Balance"), "balance_exhausted"),
    ("anthropic credit balance 400", dict(status=400, message="Your credit balance is too low to access the "
                                          "Anthropic API.", error_type="invalid_request_error"),
     "balance_exhausted"),
    ("context code", dict(status=400, message="x", code="context_length_exceeded"), "context_length"),
    ("context words", dict(status=400, message="prompt is too long: 9 tokens > 8 maximum"), "context_length"),
    ("401", dict(status=401, message="Unauthorized"), "invalid_key"),
    ("other 4xx 403", dict(status=403, message="Forbidden"), "invalid_key"),
    ("invalid key words on a 400", dict(status=400, message="API key not valid. Please pass a valid API key."),
     "invalid_key"),
    ("anthropic authentication_error", dict(status=401, message="invalid x-api-key",
                                            error_type="authentication_error"), "invalid_key"),
    ("anthropic authentication_error mid-stream", dict(message="bad key", error_type="authentication_error"),
     "invalid_key"),
    ("408", dict(status=408, message="Request Timeout"), "timeout"),
    ("504", dict(status=504, message="Gateway Timeout"), "timeout"),
    ("client timeout", dict(message="Request timed out.", timeout=True), "timeout"),
    ("500", dict(status=500, message="Internal"), "overloaded"),
    ("502", dict(status=502, message="Bad gateway"), "overloaded"),
    ("529", dict(status=529, message="Overloaded"), "overloaded"),
    ("openai server_error mid-stream", dict(message="The server had an error", error_type="server_error"),
     "overloaded"),
    ("anthropic overloaded mid-stream (status 200)",
     dict(status=200, message="Overloaded", error_type="overloaded_error"), "overloaded"),
    ("anthropic rate_limit_error mid-stream", dict(status=200, message="x", error_type="rate_limit_error"),
     "rate_limit"),
    ("anthropic api_error: its own internal error", dict(message="Internal server error", error_type="api_error"),
     "overloaded"),
    ("anthropic invalid_request_error mid-stream", dict(message="bad", error_type="invalid_request_error"),
     "request_refused"),
    ("gemini UNAVAILABLE without status", dict(message="try later", error_type="UNAVAILABLE"), "overloaded"),
    ("numeric-string code mid-stream is a status", dict(message="boom", code="503"), "overloaded"),
    ("numeric code 429 mid-stream", dict(message="slow", code=429), "rate_limit"),
    ("refused connection", dict(message="Connection refused", connection_failed=True), "unreachable"),
    ("address the bot refused", dict(message="connection refused before sending the request",
                                     original_error=AddressRefused("private", "127.0.0.1 is a loopback address")),
     "address_refused"),
    ("stream cut", dict(message="peer closed connection", error_type=STREAM_INTERRUPTED), "transient"),
    ("stream cut with words", dict(message="ended", error_type=STREAM_INTERRUPTED,
                                   original_error={"error": {"message": "Insufficient Balance"}}),
     "balance_exhausted"),
    ("nothing known", dict(message="???"), "request_refused"),
    ("zai 1302 mid-stream", dict(message="Rate limit reached for requests", code="1302"), "rate_limit"),
    ("zai 1311 mid-stream", dict(message="plan", code="1311"), "billing"),
    ("1302 from another provider is no code of ours", dict(message="x", code="1302", status=400),
     "request_refused"),
]


@pytest.mark.parametrize("desc,kwargs,kind", OWN_CASES, ids=[c[0] for c in OWN_CASES])
def test_classification_rules(desc, kwargs, kind):
    provider = "zai" if "zai" in desc else "openai"
    err = classify_failure(provider=provider, **kwargs)
    assert err.kind == kind, desc
    assert (err.type, err.retryable) == KIND_TYPE[kind]


def test_type_and_retryable_are_defined_for_every_kind():
    assert set(KIND_TYPE) == FAILURE_KINDS
    assert {c[2] for c in OWN_CASES} == FAILURE_KINDS  # the rules above reach every kind


# ---- the two failures the words alone got wrong ------------------------------------------------
def test_gemini_per_minute_quota_is_a_rate_limit_whatever_the_words_say():
    err = classify_error_body(provider="google", body=GEMINI_PER_MINUTE_429, status=429)
    assert (err.kind, err.type, err.retryable, err.retry_after) == ("rate_limit", "rate_limit", True, 37.0)
    midstream = classify_error_body(provider="google", body=GEMINI_PER_MINUTE_429)
    assert (midstream.kind, midstream.retry_after) == ("rate_limit", 37.0)


@requires_corpus
def test_recorded_gemini_per_minute_quota_is_a_rate_limit():
    sidecar = load_error("errors/gemini_429_resource_exhausted_quota_retryinfo")
    body = wire_body(sidecar)
    assert "exceeded your current quota" in body["error"]["message"]
    err = classify_error_body(provider="google", body=body, status=sidecar["status"])
    assert (err.kind, err.retryable, err.retry_after) == ("rate_limit", True, 26.0)


def _gemini_429(*details: dict) -> dict:
    return {"error": {**GEMINI_PER_MINUTE_429["error"], "details": list(details)}}


QUOTA = GEMINI_PER_MINUTE_429["error"]["details"][0]
RETRY = GEMINI_PER_MINUTE_429["error"]["details"][2]
PER_DAY = {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
    {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
     "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}
RATE_REASON = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
               "domain": "googleapis.com"}


@pytest.mark.parametrize(("details", "kind", "retry_after"), [
    ((QUOTA,), "rate_limit", None),  # the per-minute quota alone says it
    ((RETRY,), "rate_limit", 37.0),  # a RetryInfo alone says it
    ((PER_DAY, RETRY), "rate_limit", 37.0),
    ((RATE_REASON,), "rate_limit", None),
    ((PER_DAY,), "balance_exhausted", None),  # nothing structured about waiting: the words decide
    ((), "balance_exhausted", None),
], ids=["quota-per-minute", "retry-info", "per-day-with-retry-info", "rate-limit-reason", "per-day-alone",
        "no-details"])
def test_gemini_quota_details_decide_before_the_words(details, kind, retry_after):
    err = classify_error_body(provider="google", body=_gemini_429(*details), status=429)
    assert (err.kind, err.retry_after) == (kind, retry_after)


def test_retry_info_outside_a_429_does_not_make_a_rate_limit():
    body = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE",
                      "details": [RETRY]}}
    err = classify_error_body(provider="google", body=body, status=503)
    assert (err.kind, err.retry_after) == ("overloaded", 37.0)


def test_openai_insufficient_quota_stays_an_exhausted_balance():
    body = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                      "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
    err = classify_error_body(provider="openai", body=body, status=429)
    assert (err.kind, err.type, err.retryable) == ("balance_exhausted", "api_error", False)


def test_plan_without_the_model_is_billing_not_a_rate_limit():
    err = classify_error_body(provider="zai", body=ZAI_PLAN_EXCLUDES_MODEL_429, status=429)
    assert (err.kind, err.type, err.retryable) == ("billing", "api_error", False)
    # The words alone decide it too: a custom endpoint relaying Z.ai, or another provider.
    for provider in ("custom", "openrouter"):
        relayed = classify_failure(provider=provider, status=429,
                                   message=ZAI_PLAN_EXCLUDES_MODEL_429["error"]["message"])
        assert relayed.kind == "billing", provider


async def test_gemini_per_minute_quota_through_the_sdk(provider_server):
    from tests.support.drive_adapter import served_outcome
    from tests.support.fake_provider_server import Reply

    out = await served_outcome(provider_server, "google", Reply.error(429, GEMINI_PER_MINUTE_429))
    assert (out.error.kind, out.error.retryable, out.error.retry_after) == ("rate_limit", True, 37.0)


async def test_plan_without_the_model_through_the_sdk(provider_server):
    from tests.support.drive_adapter import served_outcome
    from tests.support.fake_provider_server import Reply

    provider_server.reply(Reply.error(429, ZAI_PLAN_EXCLUDES_MODEL_429))
    out = await served_outcome(provider_server, "zai")
    assert (out.error.kind, out.error.retryable, out.error.status) == ("billing", False, 429)


# ---- the wait the provider asked for -------------------------------------------------------
def _sdk_rate_limit(headers: dict[str, str]):
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("rate limited", response=response, body=None)


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "12"}, 12.0),
    ({"retry-after": "0.5"}, 0.5),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None),
    ({"retry-after": "inf"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": "-5"}, None),
    ({}, None),
])
def test_retry_after_read_from_the_sdk_response(headers, expected):
    exc = _sdk_rate_limit(headers)
    err = classify_failure(provider="openai", message="rate limited", status=429, original_error=exc)
    assert err.retry_after == expected


@pytest.mark.parametrize(("delay", "expected"), [("31s", 31.0), ("36.429760048s", 36.429760048),
                                                 ("0s", 0.0), ("soon", None), ("-3s", None)])
def test_retry_after_read_from_gemini_retry_info(delay, expected):
    details = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
               {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]
    err = classify_error_body(provider="google", status=429, body={"error": {
        "code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED",
        "details": details}})
    assert err.kind == "rate_limit" and err.retry_after == expected


async def test_retry_after_header_through_the_sdk(provider_server):
    from tests.support.drive_adapter import served_outcome
    from tests.support.fake_provider_server import Reply

    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    provider_server.reply(Reply.error(429, body, headers={"retry-after": "17"}))
    out = await served_outcome(provider_server, "openai")
    assert (out.error.kind, out.error.retry_after) == ("rate_limit", 17.0)


# ---- fields, codes, details, redaction, the metric -------------------------------------------
def test_code_is_provider_code_else_status():
    assert classify_failure(provider="openai", message="x", status=429, code="rate_limit_exceeded").code == (
        "rate_limit_exceeded"
    )
    assert classify_failure(provider="openai", message="x", status=500).code == "500"
    midstream = classify_failure(provider="openrouter", message="x", code=502)
    assert (midstream.code, midstream.status) == ("502", 502)
    assert classify_failure(provider="openai", message="x", timeout=True).code is None


def test_model_error_keeps_supported_models_in_details():
    supported = {"supported_models": ["glm-4.6", "glm-4.5-air"]}
    err = classify_failure(provider="zai", message="Unknown Model, please check the model code",
                           status=400, details=supported)
    assert err.kind == "model_error"
    assert err.details == supported
    body = {"error": {"message": "model `x` not found", "code": "model_not_found",
                      "metadata": {"available": ["a", "b"]}}}
    err = classify_error_body(provider="openrouter", body=body, status=404)
    assert err.details == {"available": ["a", "b"]}


def test_error_fields_shapes():
    assert error_fields({"error": {"message": "m", "type": "t", "code": "c"}}) == ("m", "c", "t", None)
    assert error_fields({"type": "error", "error": {"type": "overloaded_error", "message": "O"}}) == (
        "O", None, "overloaded_error", None
    )
    assert error_fields({"error": {"code": 503, "message": "m", "status": "UNAVAILABLE"}})[1:3] == (
        503, "UNAVAILABLE"
    )
    message, _, _, details = error_fields(
        {"error": {"code": 429, "message": "Provider returned error", "metadata": {"raw": "upstream busy"}}}
    )
    assert message == "Provider returned error: upstream busy"
    assert details == {"raw": "upstream busy"}
    assert error_fields({"error": "plain text"}) == ("plain text", None, None, None)
    assert error_fields("boom")[0] == "boom"


def test_api_keys_are_redacted_from_messages():
    err = classify_failure(provider="openai", status=401,
                           message="Incorrect API key provided: sk-proj-abcdefghijklmnop1234.")
    assert "abcdefghijklmnop" not in err.message
    assert REDACTED in err.message


def _count(provider: str, kind: str) -> float:
    return REGISTRY.get_sample_value("provider_errors_total", {"provider": provider, "kind": kind}) or 0.0


def test_metric_counts_by_provider_and_kind():
    before = _count("deepseek", "balance_exhausted")
    classify_failure(provider="deepseek", message="Insufficient Balance", status=402)
    assert _count("deepseek", "balance_exhausted") == before + 1


def test_metric_labels_stay_a_closed_vocabulary():
    """A hostile endpoint's codes and an unknown provider name never become label values."""
    hostile = "x-" + "9" * 40
    before = _count("other", "request_refused")
    classify_failure(provider="evil.example", message="no", status=400, code=hostile, error_type=hostile)
    assert _count("other", "request_refused") == before + 1
    values = {value for metric in REGISTRY.collect() if metric.name == "provider_errors"
              for sample in metric.samples for value in sample.labels.values()}
    assert hostile not in values and "evil.example" not in values
    assert values <= FAILURE_KINDS | {"google", "anthropic", "openai", "openrouter", "deepseek", "zai",
                                      "custom", "other"}


# ---- the words, one rule at a time -------------------------------------------------------------
WORDING_CASES = [
    ("The model `gpt-9` does not exist or you do not have access to it.", "model_error"),
    ("Unsupported model", "model_error"),
    ("unrecognized   MODEL", "model_error"),
    ("model 'x-1' is not supported", "model_error"),
    ("models/gemini-9 is not found for API version v1", "model_error"),
    ("No such model", "model_error"),
    ("this endpoint is deprecated", "request_refused"),
    ("deprecated", "model_error"),
    ("This model's maximum context length is 8192 tokens", "context_length"),
    ("context window exceeded", "context_length"),
    ("Please reduce the length of the messages", "context_length"),
    ("prompt is too long: 200251 tokens > 200000 maximum", "context_length"),
    ("Insufficient Balance", "balance_exhausted"),
    ("Your balance is insufficient", "balance_exhausted"),
    ("Not enough credits", "balance_exhausted"),
    ("余额不足或无可用资源包,请充值。", "balance_exhausted"),
    ('upstream said {"code":"1113","message":"x"}', "balance_exhausted"),
    ("Billing hard limit has been reached", "balance_exhausted"),
    ("Your credit balance is too low to access the Anthropic API. Please go to Plans & "
     "Billing to upgrade or purchase credits.", "balance_exhausted"),
    ("This request requires more credits, or fewer max_tokens. You can only afford 100", "credit_limit"),
    ("Insufficient balance; this request requires more credits", "balance_exhausted"),
    ("insufficient credits: can only afford 12 tokens", "credit_limit"),
    ("Your current subscription plan does not yet include access to GLM-5V-Turbo", "billing"),
    ("1113 tokens generated", "request_refused"),
    ("The model output is invalid JSON", "request_refused"),
    ("model llama3 is unavailable", "model_error"),
    ("Incorrect API key provided: sk-...abcd", "invalid_key"),
]


@pytest.mark.parametrize("message,kind", WORDING_CASES, ids=[c[0][:40] for c in WORDING_CASES])
def test_wording_rules(message, kind):
    assert classify_failure(provider="openai", status=400, message=message).kind == kind


@pytest.mark.parametrize("where", ["original", "details", "exception"])
def test_wording_is_read_wherever_the_failure_carries_it(where):
    text = "model foo not found"
    kwargs = {"original": {"original_error": {"error": {"message": text}}},
              "details": {"details": {"reason": text}},
              "exception": {"original_error": RuntimeError(text)}}[where]
    assert classify_failure(provider="openai", status=400, message="x", **kwargs).kind == "model_error"


def test_a_thousand_distinct_codes_from_a_hostile_endpoint_stay_a_handful_of_series():
    def series() -> int:
        return sum(len(m.samples) for m in REGISTRY.collect() if m.name == "provider_errors")

    classify_failure(provider="custom", message="no", status=400, code="warm-up")
    before = series()
    for i in range(1000):
        code = f"E{i:04d}-" + "z" * 200
        classify_failure(provider="custom", message=f"failure {i}", status=400 + i % 100, code=code, error_type=code)
    assert series() - before <= len(FAILURE_KINDS) * 2  # kind x {custom}: a closed set, whatever was sent
