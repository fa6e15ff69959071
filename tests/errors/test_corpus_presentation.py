"""Every recorded error body, classified, presented and rendered in English and Japanese.

Bodies go through `classify_error_body` (what the adapters do with an HTTP error body
or a mid-stream error payload), then `bot.errors.error_embed`, in both locales and both
credential scopes. The suite's own bodies below cover the same path without the corpus.
"""

from __future__ import annotations

import json

import pytest

from bot.edge.embeds import embed_from_spec
from bot.errors import ErrorScene, error_embed, resolve_presentation
from bot.errors.tables import TITLE_KEYS
from providers.errors import classify_error_body
from stream.sink import EmbedSpec
from tests.support.data_errors import GEMINI_PER_MINUTE_429, ZAI_PLAN_EXCLUDES_MODEL_429
from tests.support.env_corpus import CORPUS, corpus_errors, requires_corpus

# Corpus folder names -> the adapter that would have produced the error.
ADAPTER_OF = {"gemini": "google", "groq": "custom"}
STARRED = {
    "choose_supported_model", "openrouter_models", "deepseek_top_up", "openrouter_add_credits",
    "switch_model_provider", "reduce_output_tokens", "openrouter_free_models",
    "openrouter_fund_account", "verify_api_key",
}
SERVER_ONLY = {"api_key_rotation", "model_fallback"}

KEY = ["verify_api_key", "switch_model_provider"]
CONTEXT = ["reduce_output_tokens", "refresh_context", "shorten_message", "model_fallback"]
RATE = ["wait_and_retry", "api_key_rotation", "model_fallback"]
OVERLOADED = ["provider_overloaded_wait", "model_fallback"]
BALANCE = ["top_up_provider_balance", "switch_model_provider"]
MODEL = ["choose_supported_model"]
# name -> (kind, server tips), written out by hand.
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "anthropic_400_invalid_request_effort": ("request_refused", KEY),
    "anthropic_400_prompt_too_long": ("context_length", CONTEXT),
    "anthropic_404_not_found_model": ("model_error", MODEL),
    "anthropic_429_rate_limit_error": ("rate_limit", RATE),
    "anthropic_529_overloaded_error": ("overloaded", OVERLOADED),
    "deepseek_402_insufficient_balance": (
        "balance_exhausted", ["top_up_provider_balance", "deepseek_top_up", "switch_model_provider"]),
    "gemini_400_api_key_invalid": ("invalid_key", KEY),
    "gemini_400_invalid_argument": ("request_refused", KEY),
    "gemini_403_api_not_enabled": ("invalid_key", KEY),
    "gemini_404_model_not_found": ("model_error", MODEL),
    "gemini_404_model_not_found_v1": ("model_error", MODEL),
    "gemini_429_resource_exhausted_help_only": ("balance_exhausted", BALANCE),
    "gemini_429_resource_exhausted_quota_retryinfo": ("rate_limit", RATE),
    "gemini_503_unavailable_high_demand": ("overloaded", OVERLOADED),
    "gemini_503_unavailable_overloaded": ("overloaded", OVERLOADED),
    "groq_400_context_length_exceeded": ("context_length", CONTEXT),
    "groq_404_model_not_found": ("model_error", MODEL),
    "openai_400_context_length_exceeded": ("context_length", CONTEXT),
    "openai_400_unsupported_value": ("request_refused", KEY),
    "openai_401_invalid_api_key": ("invalid_key", KEY),
    "openai_404_model_not_found": ("model_error", MODEL),
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


def personal_form(server_tips: list[str]) -> list[str]:
    """The personal form, written independently of the product code."""
    tips = [f"{t}_personal" if t in STARRED else t for t in server_tips if t not in SERVER_ONLY]
    return tips + ["disable_personal_text_override"]


def load(name: str) -> tuple[str, dict, int]:
    assert CORPUS is not None
    record = json.loads((CORPUS / "errors" / f"{name}.json").read_text(encoding="utf-8"))
    body = json.loads(record["body_text"]) if record.get("body_text") else record["body"]
    return ADAPTER_OF.get(record["provider"], record["provider"]), body, record["status"]


def short(keys: list[str]) -> list[str]:
    return [k.removeprefix("genai.tips.") for k in keys]


def rendered_texts(spec: EmbedSpec) -> list[str]:
    return [spec.title, spec.description, *(part for field in spec.fields for part in field)]


def assert_rendered_in_both_languages(error, source: str) -> None:
    specs = {}
    for locale in ("en", "ja"):
        scene = ErrorScene(locale=locale, credential_source=source)
        spec = error_embed(error, scene)
        texts = rendered_texts(spec)
        assert all(texts) and spec.color is not None
        assert not any("genai." in text for text in texts), texts  # no raw key shown
        tips = resolve_presentation(error, scene).tip_keys
        assert len(spec.fields) >= 1 and spec.fields[0][1].count("• ") == len(tips)
        specs[locale] = spec
    en, ja = specs["en"], specs["ja"]
    assert en.title != ja.title and en.fields != ja.fields
    assert en.description.split("\n\n")[0] != ja.description.split("\n\n")[0]


def test_every_corpus_error_body_has_an_expectation():
    if CORPUS is None:
        pytest.skip("corpus not found at ../shared/corpus and CORPUS_DIR is unset")
    assert sorted(EXPECTED) == [n.removeprefix("errors/") for n in corpus_errors()]


@requires_corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_error_classified_and_presented(name):
    provider, body, status = load(name)
    error = classify_error_body(provider=provider, body=body, status=status)
    kind, server_tips = EXPECTED[name]
    for source in (None, "server"):
        p = resolve_presentation(error, ErrorScene(credential_source=source))
        assert (p.kind, p.title_key) == (kind, TITLE_KEYS[kind])
        assert short(p.tip_keys) == server_tips
    personal = resolve_presentation(error, ErrorScene(credential_source="personal"))
    assert short(personal.tip_keys) == personal_form(server_tips)
    for source in ("server", "personal"):
        assert_rendered_in_both_languages(error, source)


@requires_corpus
def test_provider_specific_headlines_for_the_recorded_bodies():
    def headline(name: str, locale: str) -> str:
        provider, body, status = load(name)
        error = classify_error_body(provider=provider, body=body, status=status)
        return resolve_presentation(error, ErrorScene(locale=locale)).headline

    assert "DeepSeek" in headline("deepseek_402_insufficient_balance", "en")
    assert "resource package" in headline("zai_429_1113_insufficient_balance", "en")
    assert "リソースパッケージ" in headline("zai_429_1113_insufficient_balance_cn", "ja")
    afford = headline("openrouter_402_insufficient_credits", "en")
    assert "27342" in afford and "32000" in afford
    assert "Google" in headline("openrouter_429_upstream_rate_limited", "en")
    assert "Generative Language API" in headline("gemini_403_api_not_enabled", "en")
    assert "did not accept the API key" in headline("openai_401_invalid_api_key", "en")
    assert "rate-limiting" in headline("gemini_429_resource_exhausted_quota_retryinfo", "en")


# ---- the suite's own bodies, in each provider's documented wire format -------------------
OWN_BODIES = [
    ("deepseek", 402, {"error": {"message": "Insufficient Balance", "type": "unknown_error",
                                 "param": None, "code": "invalid_request_error"}}, "balance_exhausted"),
    ("zai", 429, {"error": {"code": "1113", "message": "Insufficient balance or no resource package."}},
     "balance_exhausted"),
    ("zai", 429, ZAI_PLAN_EXCLUDES_MODEL_429, "billing"),
    ("google", 429, GEMINI_PER_MINUTE_429, "rate_limit"),
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
     "overloaded"),
    ("openai", 401, {"error": {"message": "Incorrect API key provided: sk-abc.", "code": "invalid_api_key"}},
     "invalid_key"),
]
OWN_IDS = [f"{b[0]}-{b[1]}-{b[3]}" for b in OWN_BODIES]


@pytest.mark.parametrize("provider,status,body,kind", OWN_BODIES, ids=OWN_IDS)
def test_own_bodies_classified_presented_and_rendered(provider, status, body, kind):
    error = classify_error_body(provider=provider, body=body, status=status)
    assert resolve_presentation(error, ErrorScene()).kind == kind
    for source in ("server", "personal"):
        assert_rendered_in_both_languages(error, source)


def test_plan_without_the_model_says_so():
    error = classify_error_body(provider="zai", body=ZAI_PLAN_EXCLUDES_MODEL_429, status=429)
    p = resolve_presentation(error, ErrorScene(locale="en"))
    assert p.headline == "The Z.ai plan behind this key does not include the selected model."
    assert "GLM-5" in p.detail  # the provider's own words name the model


# ---- secrets never reach the embed ---------------------------------------------------------
CANARY_IN_MESSAGE = "sk-ant-api03-CANARY0secret0in0message0XYZ"
CANARY_HELD = "held-pool-key-CANARY-7f3e"


def embed_strings(spec: EmbedSpec) -> str:
    return json.dumps(embed_from_spec(spec).to_dict(), ensure_ascii=False)


@pytest.mark.parametrize("provider,status,body,kind", OWN_BODIES, ids=OWN_IDS)
def test_canary_secrets_never_reach_the_embed(provider, status, body, kind):
    body = json.loads(json.dumps(body))
    inner = body["error"]
    inner["message"] = f"{inner['message']} (key {CANARY_IN_MESSAGE}; pool {CANARY_HELD})"
    error = classify_error_body(provider=provider, body=body, status=status)
    for locale in ("en", "ja", "fr"):
        for source in ("server", "personal"):
            spec = error_embed(error, ErrorScene(locale=locale, credential_source=source,
                                                 known_secrets=(CANARY_HELD,)))
            assert "CANARY" not in "\n".join(rendered_texts(spec)) + embed_strings(spec)


@requires_corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_canary_inside_every_corpus_body_is_redacted(name):
    provider, body, status = load(name)
    inner = body.get("error", body)
    inner["message"] = f"Bearer {CANARY_IN_MESSAGE} {inner.get('message', '')} {CANARY_HELD}"
    error = classify_error_body(provider=provider, body=body, status=status)
    spec = error_embed(error, ErrorScene(locale="ja", known_secrets=(CANARY_HELD,)))
    assert "CANARY" not in embed_strings(spec)
