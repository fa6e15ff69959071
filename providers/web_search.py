"""Which provider routes search the web natively, and with what.

A native search is the best one: grounded by the provider, no extra key, citations in
the stream. Every other route gets the bot's own `web_search` tool when the operator
named a search service (`bot/search/`). Each family's adapter turns `ChatRequest.web_search`
into its own request form and reads its citations into the done chunk's `sources`.
"""

from __future__ import annotations

from providers.anthropic_native.models import takes_web_search
from providers.gemini.request import search_tool as gemini_search_tool


def is_openai_search_model(model: str) -> bool:
    """OpenAI's Chat Completions search models (`gpt-4o-search-preview`, `gpt-5-search-api`,
    …): they take `web_search_options`; other OpenAI models do not search on that API."""
    return "search" in model.lower()


def searches_natively(provider: str, model: str) -> bool:
    """Whether `provider` serving `model` gets `ChatRequest.web_search` natively: Gemini
    but Gemma, Claude from 3.5 on, any OpenRouter model (its `web` plugin), OpenAI's
    search models. A model that does not is offered the bot's own search, if any."""
    if provider == "gemini":
        return gemini_search_tool(model) is not None
    if provider == "anthropic":
        return takes_web_search(model)
    if provider == "openrouter":
        return True
    return provider == "openai" and is_openai_search_model(model)
