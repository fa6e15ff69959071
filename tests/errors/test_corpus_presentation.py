"""Every recorded error body, classified, presented and rendered in English and Japanese.

Bodies go through `classify_error_body` (what the adapters do with an HTTP error body
or a mid-stream error payload), then the presentation, then the embed in both locales.
The suite's own bodies below cover the same path when the corpus is absent.
"""

from __future__ import annotations

import json

import pytest

from bot.error_embed import render_error_embed
from providers.errors import (
    classify_error_body,
    is_account_balance_exhausted_error,
    is_context_length_error,
    is_credit_affordability_error,
    is_provider_model_error,
)
from stream.error_embed_spec import build_error_embed_spec
from stream.error_presentation import resolve_provider_error_presentation
from tests.corpus import CORPUS, corpus_errors, requires_corpus

# Corpus folder names -> the adapter that would have produced the error.
ADAPTER_OF = {"gemini": "google", "groq": "custom"}
STARRED = {
    "choose_supported_model", "openrouter_models", "deepseek_top_up", "openrouter_add_credits",
    "switch_model_provider", "reduce_output_tokens", "openrouter_free_models",
    "openrouter_fund_account", "verify_api_key",
}
SERVER_ONLY = {"api_key_rotation", "model_fallback"}

API = ["verify_api_key", "switch_model_provider"]
CONTEXT = ["reduce_output_tokens", "refresh_context", "shorten_message", "model_fallback"]
RATE = ["wait_and_retry", "api_key_rotation", "model_fallback"]
OVERLOADED = ["provider_overloaded_wait", "model_fallback"]
BALANCE = ["top_up_provider_balance", "switch_model_provider"]
# name -> (branch, server tips), written out from the P2 table.
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "anthropic_400_invalid_request_effort": ("api_error", API),
    "anthropic_400_prompt_too_long": ("context_length", CONTEXT),
    "anthropic_404_not_found_model": ("model_error", ["choose_supported_model"]),
    "anthropic_429_rate_limit_error": ("rate_limit", RATE),
    "anthropic_529_overloaded_error": ("provider_overloaded", OVERLOADED),
    "deepseek_402_insufficient_balance": (
        "balance_exhausted", ["top_up_provider_balance", "deepseek_top_up", "switch_model_provider"]),
    "gemini_400_api_key_invalid": ("api_error", API),
    "gemini_400_invalid_argument": ("api_error", API),
    "gemini_403_api_not_enabled": ("api_error", API),
    "gemini_404_model_not_found": ("model_error", ["choose_supported_model"]),
    "gemini_404_model_not_found_v1": ("model_error", ["choose_supported_model"]),
    "gemini_429_resource_exhausted_help_only": ("balance_exhausted", BALANCE),
    "gemini_429_resource_exhausted_quota_retryinfo": ("balance_exhausted", BALANCE),
    "gemini_503_unavailable_high_demand": ("provider_overloaded", OVERLOADED),
    "gemini_503_unavailable_overloaded": ("provider_overloaded", OVERLOADED),
    "groq_400_context_length_exceeded": ("context_length", CONTEXT),
    "groq_404_model_not_found": ("model_error", ["choose_supported_model"]),
    "openai_400_context_length_exceeded": ("context_length", CONTEXT),
    "openai_400_unsupported_value": ("api_error", API),
    "openai_401_invalid_api_key": ("api_error", API),
    "openai_404_model_not_found": ("model_error", ["choose_supported_model"]),
    "openai_429_insufficient_quota": ("balance_exhausted", BALANCE),
    "openai_429_rate_limit_exceeded_tpm": ("rate_limit", RATE),
    "openai_429_request_too_large_tpm": ("rate_limit", RATE),
    "openrouter_400_invalid_model_id": ("model_error", ["choose_supported_model", "openrouter_models"]),
    "openrouter_402_insufficient_credits": (
        "credit_limit", ["reduce_output_tokens", "openrouter_add_credits", "switch_model_provider"]),
    "openrouter_429_upstream_rate_limited": ("rate_limit", RATE + ["openrouter_free_models"]),
    "zai_429_1113_insufficient_balance": ("balance_exhausted", BALANCE),
    "zai_429_1113_insufficient_balance_cn": ("balance_exhausted", BALANCE),
    "zai_429_1302_high_concurrency": ("rate_limit", RATE),
    "zai_429_1302_rate_limit_reached": ("rate_limit", RATE),
    "zai_429_1308_usage_cap": ("rate_limit", RATE),
}
# Which classifier must recognize each billing/model/context body (C1-C4).
CLASSIFIER_OF_BRANCH = {
    "model_error": is_provider_model_error,
    "balance_exhausted": is_account_balance_exhausted_error,
    "credit_limit": is_credit_affordability_error,
    "context_length": is_context_length_error,
}


def personal_form(server_tips: list[str]) -> list[str]:
    """P3, written independently of the product code."""
    tips = [f"{t}_personal" if t in STARRED else t for t in server_tips if t not in SERVER_ONLY]
    return tips + ["disable_personal_text_override"]


def load(name: str) -> tuple[str, dict, int]:
    assert CORPUS is not None
    record = json.loads((CORPUS / "errors" / f"{name}.json").read_text(encoding="utf-8"))
    body = json.loads(record["body_text"]) if record.get("body_text") else record["body"]
    return ADAPTER_OF.get(record["provider"], record["provider"]), body, record["status"]


def short(keys: list[str]) -> list[str]:
    return [k.removeprefix("genai.tips.") for k in keys]


def rendered_texts(spec) -> list[str]:
    return [spec.title, spec.description, *(part for field in spec.fields for part in field)]


def assert_rendered_in_both_languages(error, presentation_kw: dict) -> None:
    specs = {}
    for locale in ("en", "ja"):
        p = resolve_provider_error_presentation(error, locale=locale, **presentation_kw)
        spec = build_error_embed_spec(p, locale)
        texts = rendered_texts(spec)
        assert all(texts) and spec.color is not None
        assert not any("genai." in text for text in texts), texts  # no raw key shown
        assert len(spec.fields) >= 1 and spec.fields[0][1].count("• ") == len(p.tip_keys)
        specs[locale] = spec
    en, ja = specs["en"], specs["ja"]
    assert en.title != ja.title and en.fields != ja.fields
    assert en.description.split("\n\n")[0] != ja.description.split("\n\n")[0]


def test_every_corpus_error_body_has_an_expectation():
    if CORPUS is None:
        pytest.skip("corpus not found")
    assert sorted(EXPECTED) == [n.removeprefix("errors/") for n in corpus_errors()]


@requires_corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_error_classified_and_presented(name):
    provider, body, status = load(name)
    error = classify_error_body(provider=provider, body=body, status=status)
    branch, server_tips = EXPECTED[name]
    if branch in CLASSIFIER_OF_BRANCH:
        assert CLASSIFIER_OF_BRANCH[branch](error), f"{name} not recognized as {branch}"
    assert not (is_account_balance_exhausted_error(error) and is_credit_affordability_error(error))
    for source in (None, "server"):
        p = resolve_provider_error_presentation(error, credential_source=source)
        assert (p.kind, p.title_key) == (branch, f"genai.stream.{branch}_title")
        assert short(p.tip_keys) == server_tips
    personal = resolve_provider_error_presentation(error, credential_source="personal")
    assert short(personal.tip_keys) == personal_form(server_tips)
    for kw in ({"credential_source": "server"}, {"credential_source": "personal"}):
        assert_rendered_in_both_languages(error, kw)


@requires_corpus
def test_provider_specific_headlines_for_the_billing_bodies():
    def headline(name: str, locale: str) -> str:
        provider, body, status = load(name)
        error = classify_error_body(provider=provider, body=body, status=status)
        return resolve_provider_error_presentation(error, locale=locale).headline

    assert "DeepSeek" in headline("deepseek_402_insufficient_balance", "en")
    assert "resource package" in headline("zai_429_1113_insufficient_balance", "en")
    assert "リソースパッケージ" in headline("zai_429_1113_insufficient_balance_cn", "ja")
    afford = headline("openrouter_402_insufficient_credits", "en")
    assert "27342" in afford and "32000" in afford
    assert "Google" in headline("openrouter_429_upstream_rate_limited", "en")
    assert "Generative Language API" in headline("gemini_403_api_not_enabled", "en")
    assert "did not accept the API key" in headline("openai_401_invalid_api_key", "en")


# ---- the suite's own bodies, in each provider's documented wire format -------------------
OWN_BODIES = [
    ("deepseek", 402, {"error": {"message": "Insufficient Balance", "type": "unknown_error",
                                 "param": None, "code": "invalid_request_error"}}, "balance_exhausted"),
    ("zai", 429, {"error": {"code": "1113", "message": "Insufficient balance or no resource package."}},
     "balance_exhausted"),
    ("openrouter", 402, {"error": {"message": "This request requires more credits, or fewer max_tokens. "
                                              "You requested up to 4000 tokens, but can only afford 120",
                                   "code": 402}}, "credit_limit"),
    ("anthropic", 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                   "message": "prompt is too long: 9 tokens > 8 maximum"}},
     "context_length"),
    ("google", 404, {"error": {"code": 404, "status": "NOT_FOUND",
                               "message": "models/gemini-x is not found for API version v1beta"}},
     "model_error"),
    ("openai", 429, {"error": {"message": "Rate limit reached for gpt-4o", "type": "requests",
                               "code": "rate_limit_exceeded"}}, "rate_limit"),
    ("anthropic", 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
     "provider_overloaded"),
    ("openai", 401, {"error": {"message": "Incorrect API key provided: sk-abc.", "code": "invalid_api_key"}},
     "api_error"),
]


@pytest.mark.parametrize("provider,status,body,branch", OWN_BODIES,
                         ids=[f"{b[0]}-{b[1]}-{b[3]}" for b in OWN_BODIES])
def test_own_bodies_classified_presented_and_rendered(provider, status, body, branch):
    error = classify_error_body(provider=provider, body=body, status=status)
    assert resolve_provider_error_presentation(error).kind == branch
    for source in ("server", "personal"):
        assert_rendered_in_both_languages(error, {"credential_source": source})


# ---- secrets never reach the embed ---------------------------------------------------------
CANARY_IN_MESSAGE = "sk-ant-api03-CANARY0secret0in0message0XYZ"
CANARY_HELD = "held-pool-key-CANARY-7f3e"


def embed_strings(embed) -> str:
    return json.dumps(embed.to_dict(), ensure_ascii=False)


@pytest.mark.parametrize("provider,status,body,branch", OWN_BODIES,
                         ids=[f"{b[0]}-{b[1]}-{b[3]}" for b in OWN_BODIES])
def test_canary_secrets_never_reach_the_embed(provider, status, body, branch):
    body = json.loads(json.dumps(body))
    inner = body["error"]
    inner["message"] = f"{inner['message']} (key {CANARY_IN_MESSAGE}; pool {CANARY_HELD})"
    error = classify_error_body(provider=provider, body=body, status=status)
    for locale in ("en", "ja", "fr"):
        for source in ("server", "personal"):
            p = resolve_provider_error_presentation(
                error, credential_source=source, locale=locale, known_secrets=[CANARY_HELD])
            spec = build_error_embed_spec(p, locale)
            everything = "\n".join(rendered_texts(spec)) + embed_strings(render_error_embed(p, locale))
            assert "CANARY" not in everything


@requires_corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_canary_inside_every_corpus_body_is_redacted(name):
    provider, body, status = load(name)
    inner = body.get("error", body)
    inner["message"] = f"Bearer {CANARY_IN_MESSAGE} {inner.get('message', '')} {CANARY_HELD}"
    error = classify_error_body(provider=provider, body=body, status=status)
    p = resolve_provider_error_presentation(error, locale="ja", known_secrets=[CANARY_HELD])
    assert "CANARY" not in embed_strings(render_error_embed(p, "ja"))
