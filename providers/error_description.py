"""The provider-specific headline of an error embed (`create_error_description`).

One sentence saying what went wrong in the reader's language, worded for the provider
where that matters (Z.ai and DeepSeek balances, OpenRouter credits, Gemini credential
types). The raw provider text goes to the embed's detail, not here. Every adapter's
`create_error_description(error, locale)` delegates to `describe_error`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from providers.errors import (
    is_account_balance_exhausted_error,
    is_context_length_error,
    is_credit_affordability_error,
    is_provider_model_error,
)
from providers.i18n import t
from providers.types import ProviderError

PROVIDER_NAMES: dict[str, str] = {
    "google": "Google Gemini",
    "gemini": "Google Gemini",
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "openrouter": "OpenRouter",
    "deepseek": "DeepSeek",
    "zai": "Z.ai",
}

_AFFORD = re.compile(
    r"requested up to (?P<requested>\d+) tokens?, but can only afford (?P<affordable>\d+)",
    re.IGNORECASE,
)
_INVALID_KEY = re.compile(
    r"\b(?:api[ _]key not valid|invalid[ _]api[ _]key|incorrect api key|api_key_invalid"
    r"|invalid x-api-key|authentication_error)\b",
    re.IGNORECASE,
)
_MAX_DEPTH = 6


def provider_display_name(provider: str | None, locale: str | None) -> str:
    """The name readers know; custom endpoints and unknown providers get a localized noun."""
    if provider in PROVIDER_NAMES:
        return PROVIDER_NAMES[provider]
    if provider == "custom":
        return t("genai.provider.custom", locale)
    if provider:
        return provider
    return t("genai.provider.unknown", locale)


def _walk(value: Any, depth: int = 0) -> Iterator[tuple[str | None, Any]]:
    """(key, value) pairs of nested mappings and lists, bounded in depth."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key), item
            yield from _walk(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield None, item
            yield from _walk(item, depth + 1)


def _sources(error: ProviderError) -> list[Any]:
    original = error.original_error
    body = getattr(original, "body", None) if isinstance(original, BaseException) else None
    return [error.details, original if not isinstance(original, BaseException) else body]


def _find_string(error: ProviderError, wanted: str) -> str | None:
    """The first non-empty string under key `wanted` in the error's details or body."""
    for source in _sources(error):
        for key, value in _walk(source):
            if key == wanted and isinstance(value, str) and value.strip():
                return value.strip()
    return None


def error_text(error: ProviderError) -> str:
    """Every string the error carries (message, code, details, body), for wording checks."""
    parts = [error.message or "", str(error.code or "")]
    for source in _sources(error):
        parts.extend(v for _, v in _walk(source) if isinstance(v, str))
    if isinstance(error.original_error, (str, BaseException)):
        parts.append(str(error.original_error))
    return "\n".join(parts)


def _api_error_headline(error: ProviderError, text: str) -> tuple[str, dict[str, Any]]:
    if "ACCESS_TOKEN_TYPE_UNSUPPORTED" in text:
        return "genai.headline.google_credential_type", {}
    if "SERVICE_DISABLED" in text:
        return "genai.headline.google_api_disabled", {}
    if error.status == 401 or _INVALID_KEY.search(text):
        return "genai.headline.invalid_api_key", {}
    if error.status == 403:
        return "genai.headline.permission_denied", {}
    original = error.original_error
    if error.status is None and isinstance(original, BaseException) and (
        "connect" in type(original).__name__.lower()
    ):
        return "genai.headline.connection_failed", {}
    return "genai.headline.api_error", {}


def headline_key(error: ProviderError) -> tuple[str, dict[str, Any]]:
    """The catalog key and its extra parameters, in the presentation's branch order."""
    provider = error.provider
    text = error_text(error)
    if is_provider_model_error(error):
        if provider == "openrouter":
            return "genai.headline.openrouter_model_error", {}
        return "genai.headline.model_error", {}
    if is_account_balance_exhausted_error(error):
        if provider == "deepseek":
            return "genai.headline.deepseek_balance", {}
        if provider == "zai":
            return "genai.headline.zai_balance", {}
        if provider == "openrouter":
            return "genai.headline.openrouter_no_credits", {}
        return "genai.headline.balance_exhausted", {}
    if is_credit_affordability_error(error):
        if provider == "openrouter":
            match = _AFFORD.search(text)
            if match:
                return "genai.headline.openrouter_credit_limit_tokens", match.groupdict()
            return "genai.headline.openrouter_credit_limit", {}
        return "genai.headline.credit_limit", {}
    if is_context_length_error(error):
        return "genai.headline.context_length", {}
    if error.type == "rate_limit":
        upstream = _find_string(error, "provider_name") if provider == "openrouter" else None
        if upstream:
            return "genai.headline.openrouter_upstream_rate_limit", {"upstream": upstream}
        return "genai.headline.rate_limit", {}
    if error.type == "content_blocked":
        return "genai.headline.content_blocked", {}
    if error.type == "timeout":
        return "genai.headline.timeout", {}
    if error.type == "provider_overloaded":
        return "genai.headline.provider_overloaded", {}
    return _api_error_headline(error, text)


def describe_error(error: ProviderError, locale: str | None) -> str:
    """The localized, provider-specific headline for `error`."""
    key, params = headline_key(error)
    text = t(key, locale, provider=provider_display_name(error.provider, locale), **params)
    # "the custom endpoint" opens some sentences; scripts without case are unaffected.
    return text[:1].upper() + text[1:]
