"""What one model of one provider can do, asked in one place and answered by its family.

Every decision that depends on the provider and the model (which API speaks to it, how
it searches the web, reads a PDF, continues a cut answer, reasons and shows its
reasoning, which sampling parameters it takes, whether it calls tools) is a field of
`ModelCapabilities` (`providers/model_capabilities.py`). Each family answers for its own
models in a pure, SDK-free module (`providers/<family>/capabilities.py`); request
builders, the bot's search decision, `/model params`, `/status` and `/model check` all
read the same answer, so a rule lives in one place and a wrong one is wrong everywhere a
test looks.

What a name alone cannot tell comes in `RouteHints`: the operator's word about custom
endpoints, and what a provider's own model list said about the model (OpenRouter's
`supported_parameters`).
"""

from __future__ import annotations

from functools import lru_cache

from providers.anthropic_native import capabilities as anthropic
from providers.gemini import capabilities as gemini
from providers.identity import Provider, provider_of
from providers.model_capabilities import NO_HINTS, ModelCapabilities, RouteHints
from providers.openai_compat import capabilities as chat_completions
from providers.openai_responses import capabilities as openai

# The name readers know each provider by; a custom endpoint is worded by the reader's
# locale where it is shown (`providers.error_description.provider_display_name`).
DISPLAY_NAMES: dict[Provider, str] = {
    Provider.GOOGLE: "Google Gemini",
    Provider.ANTHROPIC: "Anthropic",
    Provider.OPENAI: "OpenAI",
    Provider.OPENROUTER: "OpenRouter",
    Provider.DEEPSEEK: "DeepSeek",
    Provider.ZAI: "Z.ai",
}

_FAMILIES = {
    Provider.GOOGLE: gemini.capabilities,
    Provider.ANTHROPIC: anthropic.capabilities,
    Provider.OPENAI: openai.capabilities,
    Provider.OPENROUTER: chat_completions.capabilities,
    Provider.DEEPSEEK: chat_completions.capabilities,
    Provider.ZAI: chat_completions.capabilities,
    Provider.CUSTOM: chat_completions.capabilities,
}


def display_name(provider: Provider) -> str | None:
    """The provider's public name; None for a custom endpoint (it has none of its own)."""
    return DISPLAY_NAMES.get(provider)


def capabilities_of(provider: Provider | str, model: str, hints: RouteHints = NO_HINTS) -> ModelCapabilities:
    """The capabilities of `model` on `provider`, answered by the provider's family (pure,
    cached: the same route is asked on every attempt)."""
    return _capabilities(provider_of(provider), model, hints)


@lru_cache(maxsize=4096)
def _capabilities(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    return _FAMILIES[provider](provider, model, hints)
