"""The error embed's tables, keyed by the failure's kind: title, tips and colour.

Tips name slash commands, which only the bot knows, and the command a member may run
depends on whose key failed: a member whose personal key failed is pointed at
`/personal ...` commands (the `_personal` form of a scoped tip), never at server-manager
commands they cannot run, and never at server-only features (key rotation, the
server's fallback chain).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from providers.identity import Provider
from providers.types import FailureKind, ProviderError

PERSONAL_SUFFIX = "_personal"
DISABLE_PERSONAL_OVERRIDE = "genai.tips.disable_personal_text_override"
MODEL_FALLBACK = "genai.tips.model_fallback"
API_KEY_ROTATION = "genai.tips.api_key_rotation"
SUPPORTED_MODELS_KEY = "genai.detail.supported_models"
RATE_LIMIT_ALL_KEYS_TITLE = "genai.stream.rate_limit_title_all_rotation_keys"

TITLE_KEYS: dict[FailureKind, str] = {
    "rate_limit": "genai.stream.rate_limit_title",
    "balance_exhausted": "genai.stream.balance_exhausted_title",
    "credit_limit": "genai.stream.credit_limit_title",
    "billing": "genai.stream.billing_title",
    "invalid_key": "genai.stream.invalid_key_title",
    "model_error": "genai.stream.model_error_title",
    "context_length": "genai.stream.context_length_title",
    "content_blocked": "genai.stream.content_blocked_title",
    "timeout": "genai.stream.timeout_title",
    "overloaded": "genai.stream.provider_overloaded_title",
    "transient": "genai.stream.transient_title",
    "unreachable": "genai.stream.unreachable_title",
    "address_refused": "genai.stream.address_refused_title",
    "not_found": "genai.stream.not_found_title",
    "request_refused": "genai.stream.api_error_title",
}

RED, ORANGE, AMBER, PURPLE, BLUE, DARK_RED = 0xE74C3C, 0xE67E22, 0xF39C12, 0x9B59B6, 0x3498DB, 0x992D22
# Red for a broken setup, amber for what passes on its own, purple for money.
KIND_COLORS: dict[FailureKind, int] = {
    "rate_limit": AMBER,
    "balance_exhausted": PURPLE,
    "credit_limit": PURPLE,
    "billing": PURPLE,
    "invalid_key": RED,
    "model_error": ORANGE,
    "context_length": BLUE,
    "content_blocked": DARK_RED,
    "timeout": AMBER,
    "overloaded": AMBER,
    "transient": AMBER,
    "unreachable": ORANGE,
    "address_refused": RED,
    "not_found": RED,
    "request_refused": RED,
}


@dataclass(slots=True, frozen=True)
class TipContext:
    """What a tip's condition may look at: the classified error (its kind, `reason` and
    provider; never its text) and the server's chain."""

    error: ProviderError
    fallback_chain: Sequence[str]


Condition = Callable[[TipContext], bool]


def _always(_: TipContext) -> bool:
    return True


def _provider_is(provider: Provider) -> Condition:
    return lambda ctx: ctx.error.provider == provider


def _no_fallback_chain(ctx: TipContext) -> bool:
    """The server's chain is empty; a personal override reads the member's own chain instead."""
    return not ctx.fallback_chain


def _reason_is(reason: str) -> Condition:
    return lambda ctx: ctx.error.reason == reason


_openrouter_daily_free_cap = _reason_is("daily_free_cap")
_google_credential_type = _reason_is("google_credential_type")


@dataclass(slots=True, frozen=True)
class Tip:
    """A tip key; `scoped` tips name commands and take the `_personal` suffix on a
    personal failure; `server_only` tips point at server features a member's own key
    cannot use, so a personal failure never shows them."""

    key: str
    scoped: bool = False
    when: Condition = _always
    server_only: bool = False


_FALLBACK = Tip(MODEL_FALLBACK, scoped=True, when=_no_fallback_chain, server_only=True)
_SWITCH = Tip("genai.tips.switch_model_provider", scoped=True)
_OPENROUTER_MODELS = Tip("genai.tips.openrouter_models", scoped=True, when=_provider_is(Provider.OPENROUTER))
_OPENROUTER_CREDITS = Tip("genai.tips.openrouter_add_credits", scoped=True, when=_provider_is(Provider.OPENROUTER))
_GOOGLE_CREDENTIAL = Tip("genai.tips.google_credential_type", when=_google_credential_type)
_VERIFY_KEY = Tip("genai.tips.verify_api_key", scoped=True)

TIPS: dict[FailureKind, tuple[Tip, ...]] = {
    "rate_limit": (
        Tip("genai.tips.wait_and_retry"),
        Tip(API_KEY_ROTATION, server_only=True),
        _FALLBACK,
        Tip("genai.tips.openrouter_free_models", scoped=True, when=_provider_is(Provider.OPENROUTER)),
        Tip("genai.tips.openrouter_fund_account", scoped=True, when=_openrouter_daily_free_cap),
    ),
    "balance_exhausted": (
        Tip("genai.tips.top_up_provider_balance"),
        Tip("genai.tips.deepseek_top_up", scoped=True, when=_provider_is(Provider.DEEPSEEK)),
        _OPENROUTER_CREDITS,
        _SWITCH,
    ),
    "credit_limit": (Tip("genai.tips.reduce_output_tokens", scoped=True), _OPENROUTER_CREDITS, _SWITCH),
    "billing": (Tip("genai.tips.check_plan_billing"), _SWITCH),
    "invalid_key": (_GOOGLE_CREDENTIAL, _VERIFY_KEY, _SWITCH),
    "model_error": (Tip("genai.tips.choose_supported_model", scoped=True), _OPENROUTER_MODELS),
    "context_length": (
        Tip("genai.tips.reduce_output_tokens", scoped=True),
        Tip("genai.tips.refresh_context"),
        Tip("genai.tips.shorten_message"),
        _FALLBACK,
    ),
    "content_blocked": (Tip("genai.tips.review_messages"), _SWITCH),
    "timeout": (Tip("genai.tips.shorten_message"), Tip("genai.tips.refresh_context")),
    "overloaded": (Tip("genai.tips.provider_overloaded_wait"), _FALLBACK),
    "transient": (Tip("genai.tips.wait_and_retry"), _FALLBACK),
    # The key is not to blame: is the server up, is the address right.
    "unreachable": (
        Tip("genai.tips.check_server_running"),
        Tip("genai.tips.check_endpoint_address", when=_provider_is(Provider.CUSTOM), server_only=True),
        _FALLBACK,
    ),
    # The bot refused the address itself: who can allow it, or that nobody can.
    "address_refused": (
        Tip("genai.tips.private_endpoint_operator", when=_reason_is("private_address"), server_only=True),
        Tip("genai.tips.metadata_endpoint_never", when=_reason_is("metadata_address"), server_only=True),
        Tip("genai.tips.check_endpoint_address"),
    ),
    # The address answered "not found": the base URL, never the key.
    "not_found": (Tip("genai.tips.check_base_url"), _FALLBACK),
    "request_refused": (_GOOGLE_CREDENTIAL, _VERIFY_KEY, _SWITCH, _OPENROUTER_MODELS),
}


def scoped_key(key: str, personal: bool) -> str:
    """`genai.tips.x` -> `genai.tips.x_personal` on a personal failure."""
    return key + PERSONAL_SUFFIX if personal else key


def possible_keys() -> set[str]:
    """Every catalog key the error embed can show (the catalog test reads the scoped forms here)."""
    keys = {*TITLE_KEYS.values(), RATE_LIMIT_ALL_KEYS_TITLE, DISABLE_PERSONAL_OVERRIDE, SUPPORTED_MODELS_KEY}
    for tips in TIPS.values():
        for tip in tips:
            keys.add(tip.key)
            if tip.scoped and not tip.server_only:
                keys.add(scoped_key(tip.key, True))
    return keys
