"""The headline of an error: one sentence saying what went wrong, in the reader's language.

The key is a lookup on the error's `kind`, worded for the provider or the finer cause
(`reason`, `facts`: both decided when the error was classified) where they matter
(Z.ai and DeepSeek balances, OpenRouter credits and upstreams, Gemini credential
types, a plan that does not include the model, a refused address). Headlines name no bot
command, so they live with the providers; the advice that names commands is the bot's.
The raw provider text is not part of the headline.
"""

from __future__ import annotations

from typing import Any

from providers.capabilities import display_name
from providers.i18n import t
from providers.identity import Provider, provider_of
from providers.types import FailureKind, ProviderError

HEADLINE_KEYS: dict[FailureKind, str] = {
    "rate_limit": "genai.headline.rate_limit",
    "balance_exhausted": "genai.headline.balance_exhausted",
    "credit_limit": "genai.headline.credit_limit",
    "billing": "genai.headline.billing",
    "invalid_key": "genai.headline.invalid_api_key",
    "model_error": "genai.headline.model_error",
    "context_length": "genai.headline.context_length",
    "content_blocked": "genai.headline.content_blocked",
    "timeout": "genai.headline.timeout",
    "overloaded": "genai.headline.provider_overloaded",
    "transient": "genai.headline.transient",
    "unreachable": "genai.headline.connection_failed",
    "address_refused": "genai.headline.address_refused",
    "not_found": "genai.headline.not_found",
    "request_refused": "genai.headline.api_error",
}
# The same kind worded for one provider.
PROVIDER_HEADLINE_KEYS: dict[tuple[FailureKind, str], str] = {
    ("model_error", Provider.OPENROUTER): "genai.headline.openrouter_model_error",
    ("balance_exhausted", Provider.DEEPSEEK): "genai.headline.deepseek_balance",
    ("balance_exhausted", Provider.ZAI): "genai.headline.zai_balance",
    ("balance_exhausted", Provider.OPENROUTER): "genai.headline.openrouter_no_credits",
    ("credit_limit", Provider.OPENROUTER): "genai.headline.openrouter_credit_limit",
}

Headline = tuple[str, dict[str, Any]]


def provider_display_name(provider: str | None, locale: str | None) -> str:
    """The name readers know (`providers.capabilities.display_name`); a custom endpoint and
    an unknown provider get a localized noun, any other name is shown as given."""
    if not provider:
        return t("genai.provider.unknown", locale)
    try:
        identity = provider_of(provider)
    except ValueError:
        return provider
    return display_name(identity) or t("genai.provider.custom", locale)


# The same kind worded for its finer cause (`ProviderError.reason`, decided when the error
# was classified); the values it names come from `ProviderError.facts`.
REASON_HEADLINE_KEYS: dict[tuple[FailureKind, str], str] = {
    ("invalid_key", "google_credential_type"): "genai.headline.google_credential_type",
    ("invalid_key", "google_api_disabled"): "genai.headline.google_api_disabled",
    ("invalid_key", "permission_denied"): "genai.headline.permission_denied",
    ("billing", "plan_excludes_model"): "genai.headline.plan_excludes_model",
    ("credit_limit", "affordable_tokens"): "genai.headline.openrouter_credit_limit_tokens",
    ("address_refused", "private_address"): "genai.headline.private_address",
    ("address_refused", "metadata_address"): "genai.headline.metadata_address",
}


def headline_key(error: ProviderError) -> Headline:
    """The catalog key of the headline and its extra parameters: lookups on the kind, its
    finer cause and the provider; the error's text is not read again."""
    kind = error.kind or "request_refused"
    facts = dict(error.facts or {})
    if error.reason is not None and (kind, error.reason) in REASON_HEADLINE_KEYS:
        return REASON_HEADLINE_KEYS[kind, error.reason], facts
    if kind == "rate_limit" and facts.get("upstream"):
        return "genai.headline.openrouter_upstream_rate_limit", {"upstream": facts["upstream"]}
    key = PROVIDER_HEADLINE_KEYS.get((kind, error.provider or ""), HEADLINE_KEYS[kind])
    return key, {}


def describe_error(error: ProviderError, locale: str | None) -> str:
    """The localized, provider-specific headline for `error`."""
    key, params = headline_key(error)
    text = t(key, locale, provider=provider_display_name(error.provider, locale), **params)
    # "the custom endpoint" opens some sentences; scripts without case are unaffected.
    return text[:1].upper() + text[1:]
