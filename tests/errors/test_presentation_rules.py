"""resolve_presentation: title and tips by kind, scoped by whose key failed; detail and secrets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors.presentation import (
    DETAIL_BUDGET,
    ErrorScene,
    private_detail,
    resolve_presentation,
)
from bot.errors.tables import KIND_COLORS, TIPS, TITLE_KEYS, possible_keys
from bot.turn.policy import SCOPES
from providers.error_description import HEADLINE_KEYS
from providers.errors import classify_failure
from providers.failure_kind import KIND_TYPE
from providers.i18n import strict_translation
from providers.redaction import REDACTED
from providers.types import FAILURE_KINDS, ProviderError

DISABLE = "genai.tips.disable_personal_text_override"


def err(message: str = "boom", kind: str = "request_refused", *, provider: str | None = "openai",
        status: int | None = None, code: str | None = None, details=None, original=None,
        reason: str | None = None, facts=None) -> ProviderError:
    """An error already classified as `kind` with its finer `reason` (classification has its own tests)."""
    coarse, retryable = KIND_TYPE[kind]
    return ProviderError(type=coarse, message=message, retryable=retryable, code=code, status=status,
                         provider=provider, original_error=original, details=details, kind=kind,
                         reason=reason, facts=facts)


def present(e: ProviderError, **scene):
    return resolve_presentation(e, ErrorScene(**scene))


def tips(e: ProviderError, **scene) -> list[str]:
    return [k.removeprefix("genai.tips.") for k in present(e, **scene).tip_keys]


def title(e: ProviderError, **scene) -> str:
    return present(e, **scene).title_key.removeprefix("genai.stream.")


AFFORD = "This request requires more credits, or fewer max_tokens. You requested up to 900 tokens, but can only afford 12"

# ---- the tables ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(FAILURE_KINDS))
def test_every_kind_has_a_scope_a_title_a_headline_tips_and_a_colour(kind):
    assert kind in SCOPES and kind in KIND_COLORS
    for key in (TITLE_KEYS[kind], HEADLINE_KEYS[kind]):
        assert strict_translation(key, "en") and strict_translation(key, "ja"), key
    assert TIPS[kind] and all(strict_translation(tip.key, "en") for tip in TIPS[kind])
    for source in ("server", "personal"):
        assert tips(err("x", kind), credential_source=source)


def test_the_tables_hold_nothing_but_kinds():
    assert set(TITLE_KEYS) == set(TIPS) == set(KIND_COLORS) == set(HEADLINE_KEYS) == FAILURE_KINDS


# ---- titles and server tips by kind -----------------------------------------------------------
SERVER_TABLE = [
    ("model", err("no such model", "model_error"), "model_error_title", ["choose_supported_model"]),
    ("model/openrouter", err("no such model", "model_error", provider="openrouter"), "model_error_title",
     ["choose_supported_model", "openrouter_models"]),
    ("balance", err("x", "balance_exhausted"), "balance_exhausted_title",
     ["top_up_provider_balance", "switch_model_provider"]),
    ("balance/deepseek", err("x", "balance_exhausted", provider="deepseek"), "balance_exhausted_title",
     ["top_up_provider_balance", "deepseek_top_up", "switch_model_provider"]),
    ("balance/openrouter", err("x", "balance_exhausted", provider="openrouter"), "balance_exhausted_title",
     ["top_up_provider_balance", "openrouter_add_credits", "switch_model_provider"]),
    ("afford", err(AFFORD, "credit_limit", provider="custom"), "credit_limit_title",
     ["reduce_output_tokens", "switch_model_provider"]),
    ("afford/openrouter", err(AFFORD, "credit_limit", provider="openrouter"), "credit_limit_title",
     ["reduce_output_tokens", "openrouter_add_credits", "switch_model_provider"]),
    ("billing", err("plan", "billing", provider="zai"), "billing_title",
     ["check_plan_billing", "switch_model_provider"]),
    ("invalid_key", err("Incorrect API key", "invalid_key", status=401), "invalid_key_title",
     ["verify_api_key", "switch_model_provider"]),
    ("invalid_key/google_credential", err("Request had invalid authentication credentials. "
                                          "ACCESS_TOKEN_TYPE_UNSUPPORTED", "invalid_key", provider="google",
                                          status=401, reason="google_credential_type"),
     "invalid_key_title", ["google_credential_type", "verify_api_key", "switch_model_provider"]),
    ("context", err("too long", "context_length"), "context_length_title",
     ["reduce_output_tokens", "refresh_context", "shorten_message", "model_fallback"]),
    ("rate_limit", err("slow down", "rate_limit"), "rate_limit_title",
     ["wait_and_retry", "api_key_rotation", "model_fallback"]),
    ("rate_limit/openrouter", err("slow down", "rate_limit", provider="openrouter"), "rate_limit_title",
     ["wait_and_retry", "api_key_rotation", "model_fallback", "openrouter_free_models"]),
    ("rate_limit/openrouter/daily", err("Rate limit exceeded: free-models-per-day", "rate_limit",
                                        provider="openrouter", reason="daily_free_cap"), "rate_limit_title",
     ["wait_and_retry", "api_key_rotation", "model_fallback", "openrouter_free_models",
      "openrouter_fund_account"]),
    ("blocked", err("blocked", "content_blocked"), "content_blocked_title",
     ["review_messages", "switch_model_provider"]),
    ("timeout", err("slow", "timeout"), "timeout_title", ["shorten_message", "refresh_context"]),
    ("overloaded", err("busy", "overloaded"), "provider_overloaded_title",
     ["provider_overloaded_wait", "model_fallback"]),
    ("transient", err("cut", "transient"), "transient_title", ["wait_and_retry", "model_fallback"]),
    ("unreachable", err("connection failed: refused", "unreachable"), "unreachable_title",
     ["check_server_running", "model_fallback"]),
    ("unreachable/custom", err("connection failed: refused", "unreachable", provider="custom"),
     "unreachable_title", ["check_server_running", "check_endpoint_address", "model_fallback"]),
    ("address_refused/private", err("127.0.0.1 is a loopback address", "address_refused", provider="custom",
                                    reason="private_address"), "address_refused_title",
     ["private_endpoint_operator", "check_endpoint_address"]),
    ("address_refused/metadata", err("169.254.169.254 is a cloud metadata address", "address_refused",
                                     provider="custom", reason="metadata_address"), "address_refused_title",
     ["metadata_endpoint_never", "check_endpoint_address"]),
    ("not_found", err("404 page not found", "not_found", provider="custom"), "not_found_title",
     ["check_base_url", "model_fallback"]),  # the address, never the key
    ("request_refused", err("bad request"), "api_error_title", ["verify_api_key", "switch_model_provider"]),
    ("request_refused/openrouter", err("bad request", provider="openrouter"), "api_error_title",
     ["verify_api_key", "switch_model_provider", "openrouter_models"]),
]


@pytest.mark.parametrize("name,e,title_key,expected", SERVER_TABLE, ids=[r[0] for r in SERVER_TABLE])
def test_title_and_server_tips(name, e, title_key, expected):
    assert title(e, credential_source="server") == title_key
    assert tips(e, credential_source="server") == expected


def test_the_server_table_covers_every_kind():
    assert {row[1].kind for row in SERVER_TABLE} == FAILURE_KINDS


PERSONAL_TABLE = [
    ("model/openrouter", err("x", "model_error", provider="openrouter"),
     ["choose_supported_model_personal", "openrouter_models_personal", "disable_personal_text_override"]),
    ("balance/deepseek", err("x", "balance_exhausted", provider="deepseek"),
     ["top_up_provider_balance", "deepseek_top_up_personal", "switch_model_provider_personal",
      "disable_personal_text_override"]),
    ("afford/openrouter", err(AFFORD, "credit_limit", provider="openrouter"),
     ["reduce_output_tokens_personal", "openrouter_add_credits_personal",
      "switch_model_provider_personal", "disable_personal_text_override"]),
    ("billing", err("x", "billing"),
     ["check_plan_billing", "switch_model_provider_personal", "disable_personal_text_override"]),
    ("context", err("x", "context_length"),
     ["reduce_output_tokens_personal", "refresh_context", "shorten_message",
      "disable_personal_text_override"]),
    ("rate_limit/openrouter/daily", err("free-models-per-day", "rate_limit", provider="openrouter",
                                        reason="daily_free_cap"),
     ["wait_and_retry", "openrouter_free_models_personal", "openrouter_fund_account_personal",
      "disable_personal_text_override"]),
    ("blocked", err("x", "content_blocked"),
     ["review_messages", "switch_model_provider_personal", "disable_personal_text_override"]),
    ("timeout", err("x", "timeout"), ["shorten_message", "refresh_context", "disable_personal_text_override"]),
    ("overloaded", err("x", "overloaded"), ["provider_overloaded_wait", "disable_personal_text_override"]),
    ("transient", err("x", "transient"), ["wait_and_retry", "disable_personal_text_override"]),
    ("invalid_key/google_credential", err("ACCESS_TOKEN_TYPE_UNSUPPORTED", "invalid_key", provider="google",
                                          reason="google_credential_type"),
     ["google_credential_type", "verify_api_key_personal", "switch_model_provider_personal",
      "disable_personal_text_override"]),
]


@pytest.mark.parametrize("name,e,expected", PERSONAL_TABLE, ids=[r[0] for r in PERSONAL_TABLE])
def test_personal_failures_name_personal_commands_and_end_with_disable_override(name, e, expected):
    assert tips(e, credential_source="personal") == expected


def test_money_is_never_presented_as_a_bad_key():
    """The key-checking advice would misdiagnose an empty balance, a credit limit or a plan."""
    for kind in ("balance_exhausted", "credit_limit", "billing"):
        for source in ("server", "personal"):
            keys = tips(err("x", kind, provider="zai"), credential_source=source)
            assert not any(k.startswith("verify_api_key") for k in keys), (kind, source)


# ---- credential scoping, rule by rule ---------------------------------------------------------
ALL_KIND_ERRORS = [row[1] for row in SERVER_TABLE]


@pytest.mark.parametrize("e", ALL_KIND_ERRORS, ids=[r[0] for r in SERVER_TABLE])
def test_key_rotation_tip_never_on_personal_failures(e):
    rate = err("x", "rate_limit", provider=e.provider)
    assert "api_key_rotation" in tips(rate, credential_source="server")
    assert not any(k.startswith("api_key_rotation") for k in tips(e, credential_source="personal"))
    assert not any(k.startswith("api_key_rotation") for k in tips(rate, credential_source="personal"))


@pytest.mark.parametrize("kind", ["rate_limit", "overloaded", "transient", "context_length"])
def test_model_fallback_only_on_server_failures_without_a_fallback_chain(kind):
    e = err("x", kind)
    assert "model_fallback" in tips(e, credential_source="server")
    assert "model_fallback" in tips(e)  # None is the server form
    assert "model_fallback" not in tips(e, credential_source="server", fallback_chain=("gpt-4o-mini",))
    # A personal override reads the member's own chain; the server's says nothing about it.
    assert not any(k.startswith("model_fallback") for k in tips(e, credential_source="personal"))


@pytest.mark.parametrize("e", ALL_KIND_ERRORS, ids=[r[0] for r in SERVER_TABLE])
def test_every_personal_failure_ends_with_disable_override_and_server_ones_never_get_it(e):
    assert tips(e, credential_source="personal")[-1] == "disable_personal_text_override"
    for source in ("server", None):
        keys = tips(e, credential_source=source)
        assert "disable_personal_text_override" not in keys
        assert not any(k.endswith("_personal") for k in keys)


@pytest.mark.parametrize("e", ALL_KIND_ERRORS, ids=[r[0] for r in SERVER_TABLE])
def test_unknown_credential_source_is_the_server_form(e):
    none = present(e, credential_source=None)
    server = present(e, credential_source="server")
    assert (none.title_key, none.tip_keys, none.headline, none.detail) == (
        server.title_key, server.tip_keys, server.headline, server.detail)


def test_scope_is_never_guessed_from_provider_or_model_names():
    e = err("personal key sk-personal BYOK user model", "rate_limit", provider="openrouter")
    assert tips(e) == tips(e, credential_source="server")
    with pytest.raises(ValueError, match="credential_source"):
        ErrorScene(credential_source="user")


def test_rotation_pool_exhausted_title_for_rate_limits_on_the_server_route():
    e = err("x", "rate_limit")
    assert title(e, rotation_keys_exhausted=True) == "rate_limit_title_all_rotation_keys"
    assert title(e, rotation_keys_exhausted=False) == "rate_limit_title"
    assert title(err("x", "timeout"), rotation_keys_exhausted=True) == "timeout_title"
    # A personal key is not a pool: the plain rate-limit title.
    assert title(e, credential_source="personal", rotation_keys_exhausted=True) == "rate_limit_title"


def test_openrouter_fund_tip_needs_the_daily_free_cap_wording_anywhere():
    plain = classify_failure(provider="openrouter", message="Rate limit exceeded", status=429)
    assert "openrouter_fund_account" not in tips(plain)
    in_body = classify_failure(provider="openrouter", message="Rate limit exceeded", status=429,
                               original_error={"error": {"message": "Rate limit exceeded: free-models-per-day"}})
    assert in_body.reason == "daily_free_cap"
    assert "openrouter_fund_account" in tips(in_body)
    other = classify_failure(provider="openai", message="free-models-per-day", status=429)
    assert not any(k.startswith("openrouter_") for k in tips(other))


def test_google_credential_type_tip_also_from_error_info_details():
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_TYPE_UNSUPPORTED"}]
    e = classify_failure(provider="google", message="Request had invalid authentication credentials.",
                         status=401, details=details)
    assert (e.kind, e.reason) == ("invalid_key", "google_credential_type")
    assert tips(e)[0] == "google_credential_type"
    assert "google_credential_type" not in tips(classify_failure(
        provider="google", message="Request had invalid credentials.", status=401))


@pytest.mark.parametrize("words", [AFFORD, "free-models-per-day", "ACCESS_TOKEN_TYPE_UNSUPPORTED SERVICE_DISABLED",
                                   "Your current subscription plan does not yet include access to GLM-5"])
@pytest.mark.parametrize("kind", ["rate_limit", "credit_limit", "billing", "invalid_key", "request_refused"])
def test_presentation_reads_the_classified_reason_never_the_text_again(words, kind):
    """Words that name a finer cause change nothing once the error is classified without it."""
    plain = present(err("x", kind, provider="openrouter"), locale="en")
    worded = present(err(words, kind, provider="openrouter", details={"message": words}), locale="en")
    assert (worded.title_key, worded.headline, worded.tip_keys) == (plain.title_key, plain.headline, plain.tip_keys)


def test_a_refused_connection_is_unreachable_and_never_blames_the_key():
    e = classify_failure(provider="custom", message="connection failed: [Errno 111] Connection refused",
                         connection_failed=True)
    p = present(e, locale="en")
    assert e.kind == "unreachable" and p.title_key == "genai.stream.unreachable_title"
    assert not any("verify_api_key" in k for k in p.tip_keys)
    assert "key is correct" not in " ".join(strict_translation(k, "en") or "" for k in p.tip_keys)


@settings(max_examples=250, deadline=None)
@given(
    kind=st.sampled_from(sorted(FAILURE_KINDS)),
    message=st.sampled_from([AFFORD, "free-models-per-day", "x", "ACCESS_TOKEN_TYPE_UNSUPPORTED"]),
    provider=st.sampled_from([None, "openai", "openrouter", "deepseek", "zai", "google", "anthropic", "custom"]),
    source=st.sampled_from([None, "server", "personal"]),
    chain=st.sampled_from([(), ("m1",)]),
    exhausted=st.booleans(),
    reason=st.sampled_from([None, "daily_free_cap", "google_credential_type", "private_address",
                            "metadata_address", "plan_excludes_model", "permission_denied"]),
)
def test_scope_invariants_hold_for_every_combination(kind, message, provider, source, chain, exhausted, reason):
    p = present(err(message, kind, provider=provider, reason=reason), credential_source=source,
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
    e = err("Unknown Model, please check the model code", "model_error", provider="zai",
            details={"supported_models": ["glm-4.6", "glm-4.5-air"]})
    p = present(e, locale="en")
    assert "glm-4.6, glm-4.5-air" in p.detail and "Supported models" in p.detail
    assert "Unknown Model" in p.detail
    assert "対応モデル: glm-4.6, glm-4.5-air" in present(e, locale="ja").detail
    many = err("no such model", "model_error", details={"available": [f"m{i}" for i in range(60)]})
    shown = present(many).detail
    assert "m24" in shown and "m25" not in shown and shown.endswith("…")
    assert "Supported" not in present(err("x", "request_refused", details={"models": ["a"]})).detail


def test_detail_not_repeated_when_the_headline_says_it():
    p = present(err("Overloaded", "overloaded", provider="anthropic"))
    assert p.headline == "Anthropic is overloaded or temporarily unavailable."
    assert p.detail == ""
    q = present(err("Overloaded: region eu-west", "overloaded"))
    assert q.detail == "Overloaded: region eu-west"


def test_detail_is_trimmed_to_fit_the_embed():
    p = present(err("word " * 2000))
    assert len(p.detail) <= DETAIL_BUDGET and p.detail.endswith("…")


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
    p = present(err(f"Incorrect API key provided: {secret}. Check it."))
    assert secret not in p.detail and secret not in p.headline
    assert REDACTED in p.detail


def test_every_held_key_is_redacted_even_when_it_has_no_known_shape():
    held = "held-server-key-CANARY-42"
    p = present(err(f"upstream said: {held} is revoked"), known_secrets=(held, "short"))
    assert held not in p.detail and REDACTED in p.detail
    # A redaction never leaves half a key behind when the detail is also trimmed.
    long = "x" * 1010 + held + "y" * 100  # no spaces: the trim cuts straight through the key
    q = present(err(long), known_secrets=(held,))
    assert "CANARY" not in q.detail and "held-server" not in q.detail


def test_held_keys_never_show_in_the_scenes_repr():
    scene = ErrorScene(locale="en", known_secrets=("held-server-key-CANARY-42",))
    assert "CANARY" not in repr(scene)
    assert scene.known_secrets == ("held-server-key-CANARY-42",)
    assert ErrorScene(fallback_chain=["a", "b"]).fallback_chain == ("a", "b")  # lists are frozen too


def test_headline_is_localized_and_provider_specific():
    e = err("Insufficient Balance", "balance_exhausted", provider="deepseek", status=402)
    en = present(e, locale="en").headline
    ja = present(e, locale="ja").headline
    assert "DeepSeek" in en and "DeepSeek" in ja and en != ja
    assert present(e, locale="fr").headline == en


def test_a_not_found_names_its_address_to_the_managers_and_never_in_the_embed():
    """The address a "not found" came from: in the managers' thought log (a custom
    endpoint's private detail), never in the channel's headline or detail."""
    found = err("404 page not found", "not_found", provider="custom", status=404,
                facts={"address": "10.0.0.5:11434/chat/completions"})
    shown = present(found)
    assert "10.0.0.5" not in shown.headline + shown.detail
    assert private_detail(found, "en", ()) == "(address: 10.0.0.5:11434/chat/completions)\n404 page not found"
    hosted = err("Not Found", "not_found", provider="openai", status=404, facts={"address": "api.openai.com/v1/x"})
    assert private_detail(hosted, "en", ()) is None and "api.openai.com" not in present(hosted).headline


def test_a_404_keeps_the_host_and_path_it_was_sent_to_and_never_the_query():
    import httpx

    request = httpx.Request("POST", "https://user:pw@models.example:8443/gen/chat/completions?key=AIzaSECRET")
    response = httpx.Response(404, request=request, text="404 page not found")
    error = classify_failure(provider="custom", message="404 page not found", status=404,
                             original_error=httpx.HTTPStatusError("404", request=request, response=response))
    assert error.kind == "not_found"
    assert error.facts == {"address": "models.example:8443/gen/chat/completions"}
