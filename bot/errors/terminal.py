"""An error read in a terminal (`python -m bot ask`, `python -m bot check`): the reader is
the operator, who configures the route in `.env`, not with slash commands.

So the tips name the settings (DEFAULT_TEXT_PROVIDER, DEFAULT_TEXT_MODEL,
DEFAULT_TEXT_BASE_URL, DEFAULT_TEXT_API_KEYS, …), never a command; the operator's route
has no personal form and no fallback chain, so neither is offered. A stream that sent
nothing says where it waited and how long ("<provider> at <host/path> sent nothing for
N s"): this reader set that address. Pure lookups, like the embed's own tables.
"""

from __future__ import annotations

from bot.errors.tables import Tip, TipContext, _provider_is, _reason_is
from providers.error_description import provider_display_name
from providers.i18n import t
from providers.identity import Provider
from providers.types import FailureKind, ProviderError
from stream.limits import SILENT, STOPPED

_SWITCH = Tip("genai.tips.switch_model_provider_terminal")
_VERIFY_KEY = Tip("genai.tips.verify_api_key_terminal")
_GOOGLE_CREDENTIAL = Tip("genai.tips.google_credential_type", when=_reason_is("google_credential_type"))
_OPENROUTER_MODELS = Tip("genai.tips.openrouter_models_terminal", when=_provider_is(Provider.OPENROUTER))
_OPENROUTER_CREDITS = Tip("genai.tips.openrouter_add_credits_terminal", when=_provider_is(Provider.OPENROUTER))
_REDUCE_OUTPUT = Tip("genai.tips.reduce_output_tokens_terminal")
_BASE_URL = Tip("genai.tips.check_base_url_terminal")

TERMINAL_TIPS: dict[FailureKind, tuple[Tip, ...]] = {
    "rate_limit": (
        Tip("genai.tips.wait_and_retry"),
        Tip("genai.tips.api_key_rotation_terminal"),
        Tip("genai.tips.openrouter_free_models_terminal", when=_provider_is(Provider.OPENROUTER)),
        Tip("genai.tips.openrouter_fund_account_terminal", when=_reason_is("daily_free_cap")),
    ),
    "balance_exhausted": (
        Tip("genai.tips.top_up_provider_balance"),
        Tip("genai.tips.deepseek_top_up_terminal", when=_provider_is(Provider.DEEPSEEK)),
        _OPENROUTER_CREDITS,
        _SWITCH,
    ),
    "credit_limit": (_REDUCE_OUTPUT, _OPENROUTER_CREDITS, _SWITCH),
    "billing": (Tip("genai.tips.check_plan_billing"), _SWITCH),
    "invalid_key": (_GOOGLE_CREDENTIAL, _VERIFY_KEY, _SWITCH),
    "model_error": (Tip("genai.tips.choose_supported_model_terminal"), _OPENROUTER_MODELS),
    "context_length": (_REDUCE_OUTPUT, Tip("genai.tips.shorten_message"), _SWITCH),
    "content_blocked": (Tip("genai.tips.review_messages"), _SWITCH),
    # Silence is not the question's length: is the server up, is it the address, is the model too big.
    "timeout": (Tip("genai.tips.silent_server_terminal"), _BASE_URL, Tip("genai.tips.smaller_model_terminal")),
    "overloaded": (Tip("genai.tips.provider_overloaded_wait"), _SWITCH),
    "transient": (Tip("genai.tips.wait_and_retry"), _SWITCH),
    "unreachable": (Tip("genai.tips.check_server_running"), _BASE_URL),
    "address_refused": (
        Tip("genai.tips.private_endpoint_terminal", when=_reason_is("private_address")),
        Tip("genai.tips.metadata_endpoint_terminal", when=_reason_is("metadata_address")),
        _BASE_URL,
    ),
    "not_found": (_BASE_URL,),
    "request_refused": (_GOOGLE_CREDENTIAL, _VERIFY_KEY, _SWITCH, _OPENROUTER_MODELS),
}
# A stream's silence, before and after its first content -> the line that says where and how long.
SILENCE_HEADLINES = {SILENT: "genai.headline.silent_terminal", STOPPED: "genai.headline.stopped_terminal"}


def terminal_tip_keys(error: ProviderError, kind: FailureKind) -> list[str]:
    """The kind's tips for the operator's terminal, each once."""
    ctx = TipContext(error=error, fallback_chain=())
    keys: list[str] = []
    for tip in TERMINAL_TIPS[kind]:
        if tip.when(ctx) and tip.key not in keys:
            keys.append(tip.key)
    return keys


def silence_headline(error: ProviderError, address: str | None, locale: str | None) -> str | None:
    """"<provider> at <host/path> sent nothing for N s", for a stream that showed nothing in
    time; None for any other failure, or when the address is not known."""
    key = SILENCE_HEADLINES.get(error.reason or "") if error.kind == "timeout" else None
    seconds = (error.facts or {}).get("seconds")
    if key is None or not address or not seconds:
        return None
    provider = provider_display_name(error.provider, locale)
    return t(key, locale, provider=provider, address=address, seconds=seconds)
