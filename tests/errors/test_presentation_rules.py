"""resolve_provider_error_presentation: one test per rule of P1-P3 and spec §5."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.types import ERROR_TYPES, ProviderError
from stream.error_presentation import (
    DETAIL_LIMIT,
    EMBED_DESCRIPTION_LIMIT,
    REDACTED,
    possible_keys,
    redact_secrets,
    resolve_provider_error_presentation,
)

DISABLE = "genai.tips.disable_personal_text_override"


def err(message: str = "boom", *, type: str = "api_error", provider: str | None = "openai",
        status: int | None = None, code: str | None = None, details=None, original=None):
    return ProviderError(type=type, message=message, retryable=False, code=code, status=status,
                         provider=provider, original_error=original, details=details)


def tips(e: ProviderError, **kw) -> list[str]:
    return [k.removeprefix("genai.tips.") for k in resolve_provider_error_presentation(e, **kw).tip_keys]


def title(e: ProviderError, **kw) -> str:
    return resolve_provider_error_presentation(e, **kw).title_key.removeprefix("genai.stream.")


MODEL = "The model `gpt-9` does not exist"
BALANCE = "Insufficient Balance"
AFFORD = "This request requires more credits, or fewer max_tokens. You requested up to 900 tokens, but can only afford 12"
CONTEXT = "This model's maximum context length is 8192 tokens"

# ---- P2: branches, titles and server tips -----------------------------------------------------
SERVER_TABLE = [
    ("model", err(MODEL), "model_error_title", ["choose_supported_model"]),
    ("model/openrouter", err(MODEL, provider="openrouter"), "model_error_title",
     ["choose_supported_model", "openrouter_models"]),
    ("balance", err(BALANCE), "balance_exhausted_title", ["top_up_provider_balance", "switch_model_provider"]),
    ("balance/deepseek", err(BALANCE, provider="deepseek"), "balance_exhausted_title",
     ["top_up_provider_balance", "deepseek_top_up", "switch_model_provider"]),
    ("balance/openrouter", err(BALANCE, provider="openrouter"), "balance_exhausted_title",
     ["top_up_provider_balance", "openrouter_add_credits", "switch_model_provider"]),
    ("afford", err(AFFORD, provider="custom"), "credit_limit_title",
     ["reduce_output_tokens", "switch_model_provider"]),
    ("afford/openrouter", err(AFFORD, provider="openrouter"), "credit_limit_title",
     ["reduce_output_tokens", "openrouter_add_credits", "switch_model_provider"]),
    ("context", err(CONTEXT), "context_length_title",
     ["reduce_output_tokens", "refresh_context", "shorten_message", "model_fallback"]),
    ("rate_limit", err("slow down", type="rate_limit"), "rate_limit_title",
     ["wait_and_retry", "api_key_rotation", "model_fallback"]),
    ("rate_limit/openrouter", err("slow down", type="rate_limit", provider="openrouter"), "rate_limit_title",
     ["wait_and_retry", "api_key_rotation", "model_fallback", "openrouter_free_models"]),
    ("rate_limit/openrouter/daily", err("Rate limit exceeded: free-models-per-day", type="rate_limit",
                                        provider="openrouter"), "rate_limit_title",
     ["wait_and_retry", "api_key_rotation", "model_fallback", "openrouter_free_models",
      "openrouter_fund_account"]),
    ("blocked", err("blocked", type="content_blocked"), "content_blocked_title",
     ["review_messages", "switch_model_provider"]),
    ("timeout", err("slow", type="timeout"), "timeout_title", ["shorten_message", "refresh_context"]),
    ("overloaded", err("busy", type="provider_overloaded"), "provider_overloaded_title",
     ["provider_overloaded_wait", "model_fallback"]),
    ("api_error", err("bad request"), "api_error_title", ["verify_api_key", "switch_model_provider"]),
    ("api_error/openrouter", err("bad request", provider="openrouter"), "api_error_title",
     ["verify_api_key", "switch_model_provider", "openrouter_models"]),
    ("api_error/google_credential", err("Request had invalid authentication credentials. "
                                        "ACCESS_TOKEN_TYPE_UNSUPPORTED", provider="google", status=401),
     "api_error_title", ["google_credential_type", "verify_api_key", "switch_model_provider"]),
]


@pytest.mark.parametrize("name,e,title_key,expected", SERVER_TABLE, ids=[r[0] for r in SERVER_TABLE])
def test_branch_title_and_server_tips(name, e, title_key, expected):
    assert title(e, credential_source="server") == title_key
    assert tips(e, credential_source="server") == expected


PERSONAL_TABLE = [
    ("model/openrouter", err(MODEL, provider="openrouter"),
     ["choose_supported_model_personal", "openrouter_models_personal", "disable_personal_text_override"]),
    ("balance/deepseek", err(BALANCE, provider="deepseek"),
     ["top_up_provider_balance", "deepseek_top_up_personal", "switch_model_provider_personal",
      "disable_personal_text_override"]),
    ("afford/openrouter", err(AFFORD, provider="openrouter"),
     ["reduce_output_tokens_personal", "openrouter_add_credits_personal",
      "switch_model_provider_personal", "disable_personal_text_override"]),
    ("context", err(CONTEXT),
     ["reduce_output_tokens_personal", "refresh_context", "shorten_message",
      "disable_personal_text_override"]),
    ("rate_limit/openrouter/daily", err("free-models-per-day", type="rate_limit", provider="openrouter"),
     ["wait_and_retry", "openrouter_free_models_personal", "openrouter_fund_account_personal",
      "disable_personal_text_override"]),
    ("blocked", err("x", type="content_blocked"),
     ["review_messages", "switch_model_provider_personal", "disable_personal_text_override"]),
    ("timeout", err("x", type="timeout"), ["shorten_message", "refresh_context", "disable_personal_text_override"]),
    ("overloaded", err("x", type="provider_overloaded"),
     ["provider_overloaded_wait", "disable_personal_text_override"]),
    ("api_error/google_credential", err("ACCESS_TOKEN_TYPE_UNSUPPORTED", provider="google"),
     ["google_credential_type", "verify_api_key_personal", "switch_model_provider_personal",
      "disable_personal_text_override"]),
]


@pytest.mark.parametrize("name,e,expected", PERSONAL_TABLE, ids=[r[0] for r in PERSONAL_TABLE])
def test_personal_failures_suffix_starred_tips_and_end_with_disable_override(name, e, expected):
    """P3: ★ tips get `_personal`, unstarred never do, the override tip comes last."""
    assert tips(e, credential_source="personal") == expected


# ---- C5 order ----------------------------------------------------------------------------
def test_order_model_then_balance_then_affordability_then_context_then_type():
    everything = f"{MODEL}. {BALANCE}. {AFFORD}. {CONTEXT}"
    assert title(err(everything, type="rate_limit")) == "model_error_title"
    assert title(err(f"{BALANCE}. {AFFORD}. {CONTEXT}", type="rate_limit")) == "balance_exhausted_title"
    assert title(err(f"{AFFORD}. {CONTEXT}", type="rate_limit")) == "credit_limit_title"
    assert title(err(CONTEXT, type="rate_limit")) == "context_length_title"
    assert title(err("plain", type="rate_limit")) == "rate_limit_title"
    assert title(err("x", type="model_error")) == "model_error_title"


def test_billing_is_never_presented_as_a_bad_key():
    """The generic api_error advice (verify_api_key) would misdiagnose billing."""
    for message in (BALANCE, AFFORD, "余额不足或无可用资源包,请充值。"):
        for source in ("server", "personal"):
            keys = tips(err(message, provider="zai", code="1113" if "余额" in message else None),
                        credential_source=source)
            assert not any(k.startswith("verify_api_key") for k in keys)


# ---- P3 rules one by one ---------------------------------------------------------------------
ALL_BRANCH_ERRORS = [row[1] for row in SERVER_TABLE]


@pytest.mark.parametrize("e", ALL_BRANCH_ERRORS, ids=[r[0] for r in SERVER_TABLE])
def test_key_rotation_tip_never_on_personal_failures(e):
    rate = err("x", type="rate_limit", provider=e.provider)
    assert "api_key_rotation" in tips(rate, credential_source="server")
    assert not any(k.startswith("api_key_rotation") for k in tips(e, credential_source="personal"))
    assert not any(k.startswith("api_key_rotation") for k in tips(rate, credential_source="personal"))


@pytest.mark.parametrize("kind,message", [("rate_limit", "x"), ("provider_overloaded", "x"),
                                          ("api_error", CONTEXT)])
def test_model_fallback_only_on_server_failures_without_a_fallback_chain(kind, message):
    e = err(message, type=kind)
    assert "model_fallback" in tips(e, credential_source="server")
    assert "model_fallback" in tips(e)  # None is the server form
    assert "model_fallback" not in tips(e, credential_source="server", fallback_chain=["gpt-4o-mini"])
    personal = tips(e, credential_source="personal")
    assert not any(k.startswith("model_fallback") for k in personal)
    # A personal override reads the member's own chain; the server's says nothing about it.
    assert not any(k.startswith("model_fallback") for k in tips(e, credential_source="personal",
                                                               fallback_chain=()))


@pytest.mark.parametrize("e", ALL_BRANCH_ERRORS, ids=[r[0] for r in SERVER_TABLE])
def test_every_personal_failure_ends_with_disable_override_and_server_ones_never_get_it(e):
    assert tips(e, credential_source="personal")[-1] == "disable_personal_text_override"
    for source in ("server", None):
        keys = tips(e, credential_source=source)
        assert "disable_personal_text_override" not in keys
        assert not any(k.endswith("_personal") for k in keys)


@pytest.mark.parametrize("e", ALL_BRANCH_ERRORS, ids=[r[0] for r in SERVER_TABLE])
def test_unknown_credential_source_is_the_server_form(e):
    none = resolve_provider_error_presentation(e, credential_source=None)
    server = resolve_provider_error_presentation(e, credential_source="server")
    assert (none.title_key, none.tip_keys, none.headline, none.detail) == (
        server.title_key, server.tip_keys, server.headline, server.detail)


def test_scope_is_never_guessed_from_provider_or_model_names():
    e = err("personal key sk-personal BYOK user model", provider="openrouter", type="rate_limit")
    assert tips(e) == tips(e, credential_source="server")
    with pytest.raises(ValueError, match="credential_source"):
        resolve_provider_error_presentation(e, credential_source="user")


def test_rotation_pool_exhausted_title_for_rate_limits_on_the_server_route():
    e = err("x", type="rate_limit")
    assert title(e, rotation_keys_exhausted=True) == "rate_limit_title_all_rotation_keys"
    assert title(e, rotation_keys_exhausted=False) == "rate_limit_title"
    assert title(err("x", type="timeout"), rotation_keys_exhausted=True) == "timeout_title"
    # A personal key is not a pool (documented choice): the plain rate-limit title.
    assert title(e, credential_source="personal", rotation_keys_exhausted=True) == "rate_limit_title"


def test_openrouter_fund_tip_needs_the_daily_free_cap_wording_anywhere():
    plain = err("Rate limit exceeded", type="rate_limit", provider="openrouter")
    assert "openrouter_fund_account" not in tips(plain)
    in_body = err("Rate limit exceeded", type="rate_limit", provider="openrouter",
                  original={"error": {"message": "Rate limit exceeded: free-models-per-day"}})
    assert "openrouter_fund_account" in tips(in_body)
    other = err("free-models-per-day", type="rate_limit", provider="openai")
    assert not any(k.startswith("openrouter_") for k in tips(other))


def test_google_credential_type_tip_also_from_error_info_details():
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_TYPE_UNSUPPORTED"}]
    e = err("Request had invalid authentication credentials.", provider="google", status=401, details=details)
    assert tips(e)[0] == "google_credential_type"
    assert "google_credential_type" not in tips(err("Request had invalid credentials.", provider="google"))


@settings(max_examples=250, deadline=None)
@given(
    type=st.sampled_from(sorted(ERROR_TYPES)),
    message=st.sampled_from([MODEL, BALANCE, AFFORD, CONTEXT, "free-models-per-day", "x",
                             "ACCESS_TOKEN_TYPE_UNSUPPORTED", "Please recharge."]),
    provider=st.sampled_from([None, "openai", "openrouter", "deepseek", "zai", "google", "anthropic", "custom"]),
    source=st.sampled_from([None, "server", "personal"]),
    chain=st.sampled_from([(), ("m1",)]),
    exhausted=st.booleans(),
)
def test_scope_invariants_hold_for_every_combination(type, message, provider, source, chain, exhausted):
    p = resolve_provider_error_presentation(
        err(message, type=type, provider=provider), credential_source=source,
        fallback_chain=chain, rotation_keys_exhausted=exhausted)
    assert set(p.tip_keys) | {p.title_key} <= possible_keys()
    assert len(p.tip_keys) == len(set(p.tip_keys)) and p.tip_keys
    if source == "personal":
        assert p.tip_keys[-1] == DISABLE
        assert "genai.tips.api_key_rotation" not in p.tip_keys
        assert not any(k.startswith("genai.tips.model_fallback") for k in p.tip_keys)
    else:
        assert DISABLE not in p.tip_keys and not any(k.endswith("_personal") for k in p.tip_keys)
        if chain:
            assert "genai.tips.model_fallback" not in p.tip_keys


# ---- detail: supported models, de-duplication, trimming, redaction ---------------------------
def test_model_error_shows_the_providers_supported_models():
    e = err("Unknown Model, please check the model code", type="model_error", provider="zai",
            details={"supported_models": ["glm-4.6", "glm-4.5-air"]})
    p = resolve_provider_error_presentation(e, locale="en")
    assert "glm-4.6, glm-4.5-air" in p.detail and "Supported models" in p.detail
    assert "Unknown Model" in p.detail
    ja = resolve_provider_error_presentation(e, locale="ja")
    assert "対応モデル: glm-4.6, glm-4.5-air" in ja.detail
    many = err("no such model", type="model_error", details={"available": [f"m{i}" for i in range(60)]})
    shown = resolve_provider_error_presentation(many).detail
    assert "m24" in shown and "m25" not in shown and shown.endswith("…")


def test_detail_not_repeated_when_the_headline_says_it():
    p = resolve_provider_error_presentation(err("Overloaded", type="provider_overloaded", provider="anthropic"))
    assert p.headline == "Anthropic is overloaded or temporarily unavailable."
    assert p.detail == ""
    q = resolve_provider_error_presentation(err("Overloaded: region eu-west", type="provider_overloaded"))
    assert q.detail == "Overloaded: region eu-west"


def test_detail_is_trimmed_to_fit_the_embed():
    long = "word " * 2000
    p = resolve_provider_error_presentation(err(long))
    assert len(p.detail) <= DETAIL_LIMIT and p.detail.endswith("…")
    assert len(p.headline) + 2 + len(p.detail) <= EMBED_DESCRIPTION_LIMIT


CANARY_SHAPES = [
    "sk-proj-CANARYcanary0123456789abcdef",
    "sk-ant-api03-CANARY_canary-0123456789",
    "sk-or-v1-0123456789abcdef0123456789abcdef",
    "AIzaSyCANARYcanary0123456789abcdefgh",
    "0123456789abcdef0123456789abcdef.CANARYcanary0123",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlY2FuYXJ5",
    "gsk_CANARYcanary0123456789abcdef",
]


@pytest.mark.parametrize("secret", CANARY_SHAPES)
def test_key_shaped_tokens_are_redacted_from_detail_and_headline(secret):
    p = resolve_provider_error_presentation(err(f"Incorrect API key provided: {secret}. Check it."))
    assert secret not in p.detail and secret not in p.headline
    assert REDACTED in p.detail


@pytest.mark.parametrize("text,leak", [
    ("Authorization: Bearer abc.DEF-ghi_jkl~mno", "abc.DEF-ghi_jkl~mno"),
    ("GET /v1beta/models?key=Zx9qLmN0pQ7rStUv&alt=sse", "Zx9qLmN0pQ7rStUv"),
    ('{"api_key": "plainsecretvalue123"}', "plainsecretvalue123"),
    ("x-api-key: 4f9c2a77be1d0e63aa", "4f9c2a77be1d0e63aa"),
])
def test_assigned_and_bearer_secrets_are_redacted(text, leak):
    assert leak not in redact_secrets(text)


def test_every_held_key_is_redacted_even_when_it_has_no_known_shape():
    held = "held-server-key-CANARY-42"
    p = resolve_provider_error_presentation(
        err(f"upstream said: {held} is revoked"), known_secrets=[held, "short"])
    assert held not in p.detail and REDACTED in p.detail
    # A redaction never leaves half a key behind when the detail is also trimmed.
    long = "x" * 1010 + held + "y" * 100  # no spaces: the trim cuts straight through the key
    q = resolve_provider_error_presentation(err(long), known_secrets=[held])
    assert "CANARY" not in q.detail and "held-server" not in q.detail


def test_redaction_leaves_ordinary_text_alone():
    text = "Rate limit reached for gpt-4 on tokens per min. Limit: 10000 / min. request_id=req_011CWdepJv"
    assert redact_secrets(text) == text
    assert redact_secrets("max_tokens: 32000, key: abc", known_secrets=["abc"]) == "max_tokens: 32000, key: abc"


def test_headline_is_localized_and_provider_specific():
    e = err(BALANCE, provider="deepseek", status=402)
    en = resolve_provider_error_presentation(e, locale="en").headline
    ja = resolve_provider_error_presentation(e, locale="ja").headline
    assert "DeepSeek" in en and "DeepSeek" in ja and en != ja
    assert resolve_provider_error_presentation(e, locale="fr").headline == en
