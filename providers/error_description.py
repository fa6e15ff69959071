"""The headline of an error: one sentence saying what went wrong, in the reader's language.

The key is a lookup on the error's `kind`, worded for the provider where the provider's
own facts matter (Z.ai and DeepSeek balances, OpenRouter credits and upstreams, Gemini
credential types, a plan that does not include the model). Headlines name no bot
command, so they live with the providers; the advice that names commands is the bot's.
The raw provider text is not part of the headline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from providers.error_body import walk
from providers.failure_wording import INVALID_KEY, PLAN_EXCLUDES_MODEL
from providers.i18n import t
from providers.types import FailureKind, ProviderError

PROVIDER_NAMES: dict[str, str] = {
    "google": "Google Gemini",
    "gemini": "Google Gemini",
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "openrouter": "OpenRouter",
    "deepseek": "DeepSeek",
    "zai": "Z.ai",
}

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
    "request_refused": "genai.headline.api_error",
}
# The same kind worded for one provider.
PROVIDER_HEADLINE_KEYS: dict[tuple[FailureKind, str], str] = {
    ("model_error", "openrouter"): "genai.headline.openrouter_model_error",
    ("balance_exhausted", "deepseek"): "genai.headline.deepseek_balance",
    ("balance_exhausted", "zai"): "genai.headline.zai_balance",
    ("balance_exhausted", "openrouter"): "genai.headline.openrouter_no_credits",
    ("credit_limit", "openrouter"): "genai.headline.openrouter_credit_limit",
}

_AFFORD = re.compile(
    r"requested up to (?P<requested>\d+) tokens?, but can only afford (?P<affordable>\d+)",
    re.IGNORECASE,
)
Headline = tuple[str, dict[str, Any]]


def provider_display_name(provider: str | None, locale: str | None) -> str:
    """The name readers know; custom endpoints and unknown providers get a localized noun."""
    if provider in PROVIDER_NAMES:
        return PROVIDER_NAMES[provider]
    if provider == "custom":
        return t("genai.provider.custom", locale)
    if provider:
        return provider
    return t("genai.provider.unknown", locale)


def _sources(error: ProviderError) -> list[Any]:
    original = error.original_error
    body = getattr(original, "body", None) if isinstance(original, BaseException) else None
    return [error.details, original if not isinstance(original, BaseException) else body]


def find_string(error: ProviderError, wanted: str) -> str | None:
    """The first non-empty string under key `wanted` in the error's details or body."""
    for source in _sources(error):
        for key, value in walk(source):
            if key == wanted and isinstance(value, str) and value.strip():
                return value.strip()
    return None


def error_text(error: ProviderError) -> str:
    """Every string the error carries (message, code, details, body), for wording checks."""
    parts = [error.message or "", str(error.code or "")]
    for source in _sources(error):
        parts.extend(v for _, v in walk(source) if isinstance(v, str))
    if isinstance(error.original_error, (str, BaseException)):
        parts.append(str(error.original_error))
    return "\n".join(parts)


def _credit_limit(error: ProviderError) -> Headline | None:
    match = _AFFORD.search(error_text(error)) if error.provider == "openrouter" else None
    return ("genai.headline.openrouter_credit_limit_tokens", match.groupdict()) if match else None


def _rate_limit(error: ProviderError) -> Headline | None:
    upstream = find_string(error, "provider_name") if error.provider == "openrouter" else None
    return ("genai.headline.openrouter_upstream_rate_limit", {"upstream": upstream}) if upstream else None


def _billing(error: ProviderError) -> Headline | None:
    return ("genai.headline.plan_excludes_model", {}) if PLAN_EXCLUDES_MODEL.search(error_text(error)) else None


def _invalid_key(error: ProviderError) -> Headline | None:
    text = error_text(error)
    if "ACCESS_TOKEN_TYPE_UNSUPPORTED" in text:
        return "genai.headline.google_credential_type", {}
    if "SERVICE_DISABLED" in text:
        return "genai.headline.google_api_disabled", {}
    if error.status == 403 and not INVALID_KEY.search(text):
        return "genai.headline.permission_denied", {}
    return None


def _request_refused(error: ProviderError) -> Headline | None:
    original = error.original_error
    if error.status is None and isinstance(original, BaseException) and (
        "connect" in type(original).__name__.lower()
    ):
        return "genai.headline.connection_failed", {}
    return None


# Kinds whose wording depends on what the error itself says.
_REFINEMENTS: dict[FailureKind, Callable[[ProviderError], Headline | None]] = {
    "credit_limit": _credit_limit,
    "rate_limit": _rate_limit,
    "billing": _billing,
    "invalid_key": _invalid_key,
    "request_refused": _request_refused,
}


def headline_key(error: ProviderError) -> Headline:
    """The catalog key of the headline and its extra parameters."""
    kind = error.kind or "request_refused"
    refine = _REFINEMENTS.get(kind)
    refined = refine(error) if refine is not None else None
    if refined is not None:
        return refined
    key = PROVIDER_HEADLINE_KEYS.get((kind, error.provider or ""), HEADLINE_KEYS[kind])
    return key, {}


def describe_error(error: ProviderError, locale: str | None) -> str:
    """The localized, provider-specific headline for `error`."""
    key, params = headline_key(error)
    text = t(key, locale, provider=provider_display_name(error.provider, locale), **params)
    # "the custom endpoint" opens some sentences; scripts without case are unaffected.
    return text[:1].upper() + text[1:]
