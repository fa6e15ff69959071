"""Error normalization (E1-E3) and the message classifiers (C0-C5), table-driven.

The corpus table covers every recorded error body; the suite's own bodies cover each
rule without the corpus.
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
    is_account_balance_exhausted_error,
    is_context_length_error,
    is_credit_affordability_error,
    is_provider_model_error,
)
from providers.types import ProviderError
from tests.corpus import CORPUS, corpus_errors, requires_corpus


def flags(err: ProviderError) -> set[str]:
    out = set()
    if is_provider_model_error(err):
        out.add("model")
    if is_account_balance_exhausted_error(err):
        out.add("balance")
    if is_credit_affordability_error(err):
        out.add("afford")
    if is_context_length_error(err):
        out.add("context")
    return out


# name -> (type, retryable, classifier flags)
CORPUS_EXPECTED: dict[str, tuple[str, bool, set[str]]] = {
    "anthropic_400_invalid_request_effort": ("api_error", False, set()),
    "anthropic_400_prompt_too_long": ("api_error", False, {"context"}),
    "anthropic_404_not_found_model": ("model_error", False, {"model"}),
    "anthropic_429_rate_limit_error": ("rate_limit", True, set()),
    "anthropic_529_overloaded_error": ("provider_overloaded", True, set()),
    "deepseek_402_insufficient_balance": ("api_error", False, {"balance"}),
    "gemini_400_api_key_invalid": ("api_error", False, set()),
    "gemini_400_invalid_argument": ("api_error", False, set()),
    "gemini_403_api_not_enabled": ("api_error", False, set()),
    "gemini_404_model_not_found": ("model_error", False, {"model"}),
    "gemini_404_model_not_found_v1": ("model_error", False, {"model"}),
    # "You exceeded your current quota" is C3 wording, so E3.3 makes it a billing denial.
    "gemini_429_resource_exhausted_help_only": ("api_error", False, {"balance"}),
    "gemini_429_resource_exhausted_quota_retryinfo": ("api_error", False, {"balance"}),
    "gemini_503_unavailable_high_demand": ("provider_overloaded", True, set()),
    "gemini_503_unavailable_overloaded": ("provider_overloaded", True, set()),
    "groq_400_context_length_exceeded": ("api_error", False, {"context"}),
    "groq_404_model_not_found": ("model_error", False, {"model"}),
    "openai_400_context_length_exceeded": ("api_error", False, {"context"}),
    "openai_400_unsupported_value": ("api_error", False, set()),
    "openai_401_invalid_api_key": ("api_error", False, set()),
    "openai_404_model_not_found": ("model_error", False, {"model"}),
    "openai_429_insufficient_quota": ("api_error", False, {"balance"}),
    "openai_429_rate_limit_exceeded_tpm": ("rate_limit", True, set()),
    "openai_429_request_too_large_tpm": ("rate_limit", True, set()),
    "openrouter_400_invalid_model_id": ("model_error", False, {"model"}),
    "openrouter_402_insufficient_credits": ("api_error", False, {"afford"}),
    "openrouter_429_upstream_rate_limited": ("rate_limit", True, set()),
    "zai_429_1113_insufficient_balance": ("api_error", False, {"balance"}),
    "zai_429_1113_insufficient_balance_cn": ("api_error", False, {"balance"}),
    "zai_429_1302_high_concurrency": ("rate_limit", True, set()),
    "zai_429_1302_rate_limit_reached": ("rate_limit", True, set()),
    "zai_429_1308_usage_cap": ("rate_limit", True, set()),
}


def load_error(name: str) -> dict:
    assert CORPUS is not None
    return json.loads((CORPUS / f"{name}.json").read_text())


@requires_corpus
def test_every_corpus_error_body_has_an_expectation():
    names = {n.removeprefix("errors/") for n in corpus_errors()}
    assert names == set(CORPUS_EXPECTED)


@requires_corpus
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_error_body_classified(name):
    sidecar = load_error(f"errors/{name}")
    body = sidecar["body"]
    err = classify_error_body(provider=sidecar["provider"], body=body, status=sidecar["status"])
    kind, retryable, expected_flags = CORPUS_EXPECTED[name]
    assert (err.type, err.retryable) == (kind, retryable)
    assert flags(err) == expected_flags
    assert err.status == sidecar["status"]
    assert err.provider == sidecar["provider"]
    assert err.original_error == body
    code = body.get("error", {}).get("code")
    assert err.code == (str(code) if code is not None else str(sidecar["status"]))
    if kind == "model_error":
        assert err.details is not None


@requires_corpus
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_error_body_same_midstream_when_code_is_numeric(name):
    """E2: a numeric code in a mid-stream body stands in for the HTTP status."""
    sidecar = load_error(f"errors/{name}")
    body = sidecar["body"]
    code = body.get("error", {}).get("code")
    midstream = classify_error_body(provider=sidecar["provider"], body=body, status=None)
    http = classify_error_body(provider=sidecar["provider"], body=body, status=sidecar["status"])
    if str(code) == str(sidecar["status"]) or sidecar["provider"] == "zai":
        assert (midstream.type, midstream.retryable) == (http.type, http.retryable)
    assert flags(midstream) == flags(http)


# ---- the suite's own bodies: one per rule -----------------------------------------------------
OWN_CASES = [
    # (description, kwargs, type, retryable)
    ("model 404", dict(status=404, message="The model `gpt-9` does not exist or you do not have access to it."),
     "model_error", False),
    ("model 503 unavailable wins over 5xx",
     dict(status=503, message="Model foo-large is unavailable right now"), "model_error", False),
    ("model code", dict(status=400, message="bad", code="model_not_found"), "model_error", False),
    ("deprecated model", dict(status=400, message="This model has been deprecated."), "model_error", False),
    ("deprecated parameter is not a model error",
     dict(status=400, message="The parameter 'functions' is deprecated."), "api_error", False),
    ("content filter", dict(status=400, message="Blocked by the content filter"), "content_blocked", False),
    ("content policy code", dict(status=400, message="x", code="content_policy_violation"),
     "content_blocked", False),
    ("the word content alone", dict(status=400, message="messages[1].content must be a string"),
     "api_error", False),
    ("429 plain", dict(status=429, message="slow down"), "rate_limit", True),
    ("429 saying quota but rate", dict(status=429, message="Rate limit reached; retry in 2s",
                                       code="rate_limit_exceeded"), "rate_limit", True),
    ("429 insufficient_quota code", dict(status=429, message="x", code="insufficient_quota"),
     "api_error", False),
    ("429 zai 1113 numeric", dict(status=429, message="whatever", code=1113), "api_error", False),
    ("429 affordability", dict(status=429, message="This request requires more credits"),
     "api_error", False),
    ("402", dict(status=402, message="Payment required"), "api_error", False),
    ("408", dict(status=408, message="Request Timeout"), "timeout", True),
    ("504", dict(status=504, message="Gateway Timeout"), "timeout", True),
    ("client timeout", dict(message="Request timed out.", timeout=True), "timeout", True),
    ("500", dict(status=500, message="Internal"), "provider_overloaded", True),
    ("502", dict(status=502, message="Bad gateway"), "provider_overloaded", True),
    ("529", dict(status=529, message="Overloaded"), "provider_overloaded", True),
    ("openai server_error mid-stream", dict(message="The server had an error", error_type="server_error"),
     "provider_overloaded", True),
    ("anthropic overloaded mid-stream (status 200)",
     dict(status=200, message="Overloaded", error_type="overloaded_error"), "provider_overloaded", True),
    ("anthropic rate_limit_error mid-stream", dict(status=200, message="x", error_type="rate_limit_error"),
     "rate_limit", True),
    ("anthropic api_error", dict(message="Internal server error", error_type="api_error"), "api_error", True),
    ("anthropic authentication_error", dict(status=401, message="invalid x-api-key",
                                            error_type="authentication_error"), "api_error", False),
    ("anthropic invalid_request_error mid-stream", dict(message="bad", error_type="invalid_request_error"),
     "api_error", False),
    ("gemini UNAVAILABLE without status", dict(message="try later", error_type="UNAVAILABLE"),
     "provider_overloaded", True),
    ("numeric-string code mid-stream is a status", dict(message="boom", code="503"),
     "provider_overloaded", True),
    ("numeric code 429 mid-stream", dict(message="slow", code=429), "rate_limit", True),
    ("other 4xx", dict(status=403, message="Forbidden"), "api_error", False),
    ("refused connection", dict(message="Connection refused", connection_failed=True), "api_error", False),
    ("stream cut", dict(message="peer closed connection", error_type=STREAM_INTERRUPTED),
     "provider_overloaded", True),
    ("nothing known", dict(message="???"), "api_error", False),
    ("zai 1302 mid-stream", dict(message="Rate limit reached for requests", code="1302"),
     "rate_limit", True),
]


@pytest.mark.parametrize("desc,kwargs,kind,retryable", OWN_CASES, ids=[c[0] for c in OWN_CASES])
def test_classification_rules(desc, kwargs, kind, retryable):
    provider = "zai" if "zai" in desc else "openai"
    err = classify_failure(provider=provider, **kwargs)
    assert (err.type, err.retryable) == (kind, retryable), desc


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
    assert err.type == "model_error"
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
    assert "[redacted key]" in err.message


def test_metric_incremented_per_provider_and_code():
    labels = {"provider": "deepseek", "code": "402"}
    before = REGISTRY.get_sample_value("provider_errors_total", labels) or 0.0
    classify_failure(provider="deepseek", message="Insufficient Balance", status=402)
    assert REGISTRY.get_sample_value("provider_errors_total", labels) == before + 1


# ---- classifiers on ProviderError directly (C0-C5) ---------------------------------------------
def perr(message: str = "", *, type: str = "api_error", original=None, details=None, code=None):
    return ProviderError(type=type, message=message, retryable=False, code=code,
                         original_error=original, details=details)


CLASSIFIER_CASES = [
    (perr("The model `gpt-9` does not exist or you do not have access to it."), {"model"}),
    (perr("Unsupported model"), {"model"}),
    (perr("unrecognized   MODEL"), {"model"}),
    (perr("model 'x-1' is not supported"), {"model"}),
    (perr("models/gemini-9 is not found for API version v1"), {"model"}),
    (perr("No such model"), {"model"}),
    (perr("x", code="model_not_found"), {"model"}),
    (perr("x", type="model_error"), {"model"}),
    (perr("this endpoint is deprecated"), set()),
    (perr("deprecated"), {"model"}),
    (perr("This model's maximum context length is 8192 tokens"), {"context"}),
    (perr("context window exceeded"), {"context"}),
    (perr("Please reduce the length of the messages"), {"context"}),
    (perr("x", code="context_length_exceeded"), {"context"}),
    (perr("prompt is too long: 200251 tokens > 200000 maximum"), {"context"}),
    (perr("Insufficient Balance"), {"balance"}),
    (perr("Your balance is insufficient"), {"balance"}),
    (perr("x", original={"error": {"message": "Please recharge."}}), {"balance"}),
    (perr("x", original={"detail": "insufficient credits"}), {"balance"}),
    (perr("Not enough credits"), {"balance"}),
    (perr("x", code="1113"), {"balance"}),
    (perr("余额不足或无可用资源包,请充值。", code="1113"), {"balance"}),
    (perr("Billing hard limit has been reached"), {"balance"}),
    (perr("Your credit balance is too low to access the Anthropic API. Please go to Plans & "
          "Billing to upgrade or purchase credits."), {"balance"}),
    (perr("x", code="insufficient_user_quota"), {"balance"}),
    (perr("This request requires more credits, or fewer max_tokens. You can only afford 100"),
     {"afford"}),
    # Both wordings: the exhausted balance wins, the two are exclusive.
    (perr("Insufficient balance; this request requires more credits"), {"balance"}),
    (perr("insufficient credits: can only afford 12 tokens"), {"afford"}),
    (perr("1113 tokens generated"), set()),
    (perr("The model output is invalid JSON"), set()),
    (perr("model llama3 is unavailable"), {"model"}),
    (perr("x", original=RuntimeError("model foo not found")), {"model"}),
    (perr("x", details={"reason": "context length exceeded"}), {"context"}),
]


@pytest.mark.parametrize("err,expected", CLASSIFIER_CASES, ids=[c[0].message[:40] for c in CLASSIFIER_CASES])
def test_classifiers(err, expected):
    assert flags(err) == expected
    assert not ({"balance", "afford"} <= flags(err))
