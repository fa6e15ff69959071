"""What an error embed says: title, headline, raw detail and credential-scoped tips.

The branch order (model -> balance -> affordability -> context -> error type) decides
the advice, and the credential source decides which commands that advice may name:
a member whose personal key failed is pointed at `/personal ...` commands, never at
server-manager commands they cannot run (normalization-rules P1-P3, spec §5).
Pure: no I/O beyond the cached catalog lookups of the headline, no clock, no state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from providers.error_description import describe_error, error_text
from providers.errors import (
    is_account_balance_exhausted_error,
    is_context_length_error,
    is_credit_affordability_error,
    is_provider_model_error,
)
from providers.i18n import t
from providers.types import ProviderError

PERSONAL_SUFFIX = "_personal"
DISABLE_PERSONAL_OVERRIDE = "genai.tips.disable_personal_text_override"
MODEL_FALLBACK = "genai.tips.model_fallback"
API_KEY_ROTATION = "genai.tips.api_key_rotation"

# Discord's embed description limit, and how much of it raw provider text may take so the
# headline and the tip fields still fit the 6000-character total of one embed.
EMBED_DESCRIPTION_LIMIT = 4096
DETAIL_LIMIT = 1024
SUPPORTED_MODELS_SHOWN = 25
_SEPARATOR = "\n\n"

CREDENTIAL_SOURCES = ("server", "personal")

TITLE_KEYS: dict[str, str] = {
    "model_error": "genai.stream.model_error_title",
    "balance_exhausted": "genai.stream.balance_exhausted_title",
    "credit_limit": "genai.stream.credit_limit_title",
    "context_length": "genai.stream.context_length_title",
    "rate_limit": "genai.stream.rate_limit_title",
    "content_blocked": "genai.stream.content_blocked_title",
    "timeout": "genai.stream.timeout_title",
    "provider_overloaded": "genai.stream.provider_overloaded_title",
    "api_error": "genai.stream.api_error_title",
}
RATE_LIMIT_ALL_KEYS_TITLE = "genai.stream.rate_limit_title_all_rotation_keys"


@dataclass(slots=True, frozen=True)
class _Ctx:
    error: ProviderError
    text: str
    personal: bool
    fallback_chain: Sequence[str]

    @property
    def provider(self) -> str | None:
        return self.error.provider


Condition = Callable[[_Ctx], bool]


def _always(_: _Ctx) -> bool:
    return True


def _provider_is(name: str) -> Condition:
    return lambda ctx: ctx.provider == name


def _no_fallback_chain(ctx: _Ctx) -> bool:
    """The server's chain is empty; a personal override reads the member's own chain instead."""
    return not ctx.fallback_chain


def _openrouter_daily_free_cap(ctx: _Ctx) -> bool:
    return ctx.provider == "openrouter" and "free-models-per-day" in ctx.text


def _google_credential_type(ctx: _Ctx) -> bool:
    return "ACCESS_TOKEN_TYPE_UNSUPPORTED" in ctx.text


@dataclass(slots=True, frozen=True)
class Tip:
    """A tip key; `scoped` tips name commands and take the `_personal` suffix;
    `server_only` tips point at server-scoped features a member's own key cannot use."""

    key: str
    scoped: bool = False
    when: Condition = _always
    server_only: bool = False


_FALLBACK = Tip(MODEL_FALLBACK, scoped=True, when=_no_fallback_chain, server_only=True)

TIPS: dict[str, tuple[Tip, ...]] = {
    "model_error": (
        Tip("genai.tips.choose_supported_model", scoped=True),
        Tip("genai.tips.openrouter_models", scoped=True, when=_provider_is("openrouter")),
    ),
    "balance_exhausted": (
        Tip("genai.tips.top_up_provider_balance"),
        Tip("genai.tips.deepseek_top_up", scoped=True, when=_provider_is("deepseek")),
        Tip("genai.tips.openrouter_add_credits", scoped=True, when=_provider_is("openrouter")),
        Tip("genai.tips.switch_model_provider", scoped=True),
    ),
    "credit_limit": (
        Tip("genai.tips.reduce_output_tokens", scoped=True),
        Tip("genai.tips.openrouter_add_credits", scoped=True, when=_provider_is("openrouter")),
        Tip("genai.tips.switch_model_provider", scoped=True),
    ),
    "context_length": (
        Tip("genai.tips.reduce_output_tokens", scoped=True),
        Tip("genai.tips.refresh_context"),
        Tip("genai.tips.shorten_message"),
        _FALLBACK,
    ),
    "rate_limit": (
        Tip("genai.tips.wait_and_retry"),
        Tip(API_KEY_ROTATION, server_only=True),
        _FALLBACK,
        Tip("genai.tips.openrouter_free_models", scoped=True, when=_provider_is("openrouter")),
        Tip("genai.tips.openrouter_fund_account", scoped=True, when=_openrouter_daily_free_cap),
    ),
    "content_blocked": (
        Tip("genai.tips.review_messages"),
        Tip("genai.tips.switch_model_provider", scoped=True),
    ),
    "timeout": (
        Tip("genai.tips.shorten_message"),
        Tip("genai.tips.refresh_context"),
    ),
    "provider_overloaded": (
        Tip("genai.tips.provider_overloaded_wait"),
        _FALLBACK,
    ),
    "api_error": (
        Tip("genai.tips.google_credential_type", when=_google_credential_type),
        Tip("genai.tips.verify_api_key", scoped=True),
        Tip("genai.tips.switch_model_provider", scoped=True),
        Tip("genai.tips.openrouter_models", scoped=True, when=_provider_is("openrouter")),
    ),
}


def scoped_key(key: str, personal: bool) -> str:
    """`genai.tips.x` -> `genai.tips.x_personal` on a personal failure."""
    return key + PERSONAL_SUFFIX if personal else key


def possible_keys() -> set[str]:
    """Every catalog key this module can emit (the catalog test derives scoped forms here)."""
    keys = {*TITLE_KEYS.values(), RATE_LIMIT_ALL_KEYS_TITLE, DISABLE_PERSONAL_OVERRIDE}
    keys.add("genai.detail.supported_models")
    for tips in TIPS.values():
        for tip in tips:
            keys.add(tip.key)
            if tip.scoped and not tip.server_only:
                keys.add(scoped_key(tip.key, True))
    return keys


@dataclass(slots=True)
class ErrorPresentation:
    """Everything the error embed shows; `kind` is the branch and picks the colour."""

    title_key: str
    headline: str
    detail: str
    tip_keys: list[str] = field(default_factory=list)
    kind: str = "api_error"


def branch_of(error: ProviderError) -> str:
    """C5 order: model -> balance -> affordability -> context, then the error type."""
    if is_provider_model_error(error):
        return "model_error"
    if is_account_balance_exhausted_error(error):
        return "balance_exhausted"
    if is_credit_affordability_error(error):
        return "credit_limit"
    if is_context_length_error(error):
        return "context_length"
    if error.type in ("rate_limit", "content_blocked", "timeout", "provider_overloaded"):
        return error.type
    return "api_error"


# ---- secrets -----------------------------------------------------------------------------
REDACTED = "[redacted]"
# A held "key" shorter than this is not a real credential; replacing it would shred prose.
MIN_KNOWN_SECRET = 6
_TOKEN = r"[A-Za-z0-9._~+/=-]"
_SECRET_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),  # sk-, sk-proj-, sk-ant-api03-, sk-or-v1-
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),  # Google API keys
    re.compile(r"\b(?:gsk|xai|hf|ghp|gho|ghs|xox[abp])[_-][A-Za-z0-9_-]{16,}"),
    re.compile(r"\b[0-9a-fA-F]{32}\.[A-Za-z0-9]{16}\b"),  # Z.ai: 32 hex, a dot, 16 alnum
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"\bya29\.[A-Za-z0-9_-]{16,}"),  # Google OAuth access token
)
_BEARER = re.compile(rf"\b(Bearer|Basic|Token)(\s+){_TOKEN}{{8,}}", re.IGNORECASE)
# key=..., "api_key": "...", x-api-key: ... : the value is secret whatever it looks like.
_ASSIGNED = re.compile(
    r"(\b(?:x-)?(?:api[_-]?key|key|access[_-]?token|token|secret|password|authorization|auth)"
    rf"[\"']?\s*[:=]\s*[\"']?)({_TOKEN}{{12,}})",
    re.IGNORECASE,
)


def redact_secrets(text: str, known_secrets: Iterable[str] = ()) -> str:
    """Every held key and every credential-shaped token replaced by REDACTED.

    Providers echo keys back ("Incorrect API key provided: sk-...") and gateways relay
    request dumps, so both the bot's own keys and anything key-shaped are removed.
    """
    if not text:
        return text
    # Longest first, so a held key containing another held key is removed whole.
    for secret in sorted({s.strip() for s in known_secrets if s}, key=len, reverse=True):
        if len(secret) >= MIN_KNOWN_SECRET:
            text = text.replace(secret, REDACTED)
    for shape in _SECRET_SHAPES:
        text = shape.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


# ---- detail ------------------------------------------------------------------------------
_WS = re.compile(r"\s+")


def _normalized(text: str) -> str:
    return _WS.sub(" ", text).strip().rstrip(".!?。！？ ").casefold()


def trim(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary near the end when there is one."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit - 80:
        cut = cut[:space]
    return cut.rstrip() + "…"


def supported_models(details: object) -> list[str]:
    """The provider's list of supported model ids, when the adapter kept one in `details`."""
    if isinstance(details, Mapping):
        for key in ("supported_models", "available_models", "models", "supported", "available"):
            value = details.get(key)
            if isinstance(value, (list, tuple)):
                return [str(m) for m in value if isinstance(m, str) and m.strip()]
    return []


def _raw_detail(error: ProviderError, branch: str, locale: str | None) -> str:
    text = (error.message or "").strip()
    if branch == "model_error":
        models = supported_models(error.details)
        if models:
            shown = ", ".join(models[:SUPPORTED_MODELS_SHOWN])
            if len(models) > SUPPORTED_MODELS_SHOWN:
                shown += ", …"
            listing = t("genai.detail.supported_models", locale, models=shown)
            text = f"{text}\n{listing}" if text else listing
    return text


def build_detail(
    error: ProviderError, branch: str, headline: str, locale: str | None, known_secrets: Iterable[str]
) -> str:
    """The provider's own words: redacted first (so a trim cannot leave half a key), de-duplicated
    against the headline, then trimmed to what the embed can hold."""
    detail = redact_secrets(_raw_detail(error, branch, locale), known_secrets)
    normalized = _normalized(detail)
    if not normalized or normalized in _normalized(headline):
        return ""
    room = EMBED_DESCRIPTION_LIMIT - len(headline) - len(_SEPARATOR)
    return trim(detail, max(0, min(DETAIL_LIMIT, room)))


# ---- the entry point -----------------------------------------------------------------------
def resolve_provider_error_presentation(
    error: ProviderError,
    *,
    credential_source: str | None = None,
    fallback_chain: Sequence[str] = (),
    rotation_keys_exhausted: bool = False,
    locale: str | None = None,
    known_secrets: Iterable[str] = (),
) -> ErrorPresentation:
    """Title, headline, detail and tips for a failed turn.

    `credential_source` is the turn's resolved credential route ("server", "personal"),
    None meaning the server form; it is never guessed from provider or model names.
    """
    if credential_source is not None and credential_source not in CREDENTIAL_SOURCES:
        raise ValueError(
            f"credential_source must be 'server', 'personal' or None, not {credential_source!r}"
        )
    personal = credential_source == "personal"
    secrets = tuple(known_secrets)
    branch = branch_of(error)
    ctx = _Ctx(error=error, text=error_text(error), personal=personal,
               fallback_chain=tuple(fallback_chain))
    title_key = TITLE_KEYS[branch]
    # A rotation pool is server-scoped: a personal key has no pool to exhaust.
    if branch == "rate_limit" and rotation_keys_exhausted and not personal:
        title_key = RATE_LIMIT_ALL_KEYS_TITLE
    tips: list[str] = []
    for tip in TIPS[branch]:
        if personal and tip.server_only or not tip.when(ctx):
            continue
        key = scoped_key(tip.key, personal and tip.scoped)
        if key not in tips:
            tips.append(key)
    if personal:
        tips.append(DISABLE_PERSONAL_OVERRIDE)
    headline = redact_secrets(describe_error(error, locale), secrets)
    detail = build_detail(error, branch, headline, locale, secrets)
    return ErrorPresentation(
        title_key=title_key, headline=headline, detail=detail, tip_keys=tips, kind=branch
    )
