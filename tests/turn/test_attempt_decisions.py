"""Every provider's per-attempt decisions, asked the way a turn asks them.

The search decision once asked for a provider named "gemini" while every Google route
said "google", so no Gemini route ever searched and every test still passed: no test
asked the decision for each provider. Here each provider's attempt is opened as the turn
opens it (`open_adapter`), and the question the turn asks of it (`AnswerSearch.request_for`
with the adapter's capabilities) is answered for each: native search where the family
searches itself, the bot's own `web_search` tool elsewhere. Provider names are compared
nowhere as strings (a scan of the product code).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.capabilities.web_search.answer import WEB_SEARCH_TOOL, AnswerSearch
from bot.repo import KeyLease, KeyRef, ModelTarget
from bot.turn.access import ProviderAccess
from bot.turn.attempts import open_adapter
from providers import KNOWN_PROVIDERS, Provider
from providers.types import ChatRequest, Message, ToolSpec

ROOT = Path(__file__).resolve().parents[2]
LEASE = KeyLease(KeyRef("server", 1), "…0001", "sk-decisions-0001")
# provider -> (a current model, the native search form it gets, or None: the bot's tool)
ROUTES = {
    Provider.GOOGLE: ("gemini-3-flash-preview", "google_search"),
    Provider.ANTHROPIC: ("claude-opus-4-7", "anthropic_server_tool"),
    Provider.OPENAI: ("gpt-5.6-terra", "responses_tool"),
    Provider.OPENROUTER: ("anthropic/claude-sonnet-4.5", "openrouter_server_tool"),
    Provider.DEEPSEEK: ("deepseek-reasoner", None),
    Provider.ZAI: ("glm-4.6", None),
    Provider.CUSTOM: ("llama-3.3-70b", None),
}
QUESTION = ChatRequest(messages=[Message("user", "what happened today?")],
                       tools=[ToolSpec(WEB_SEARCH_TOOL, "search the web"), ToolSpec("roll_dice", "roll")])


def test_every_known_provider_has_a_route_here():
    assert set(ROUTES) == set(Provider) and set(KNOWN_PROVIDERS) == {p.value for p in Provider}


@pytest.mark.parametrize("provider", list(ROUTES), ids=[p.value for p in ROUTES])
async def test_each_attempt_decides_its_search_from_its_own_capabilities(provider):
    model, native = ROUTES[provider]
    base_url = "https://llm.example.com/v1" if provider is Provider.CUSTOM else None
    adapter = open_adapter(ModelTarget(provider, model, base_url), LEASE, False, ProviderAccess())
    assert adapter is not None and adapter.capabilities.provider is provider
    assert adapter.capabilities.web_search == native

    async def allowed(paid_by: str) -> bool:
        return True

    async def left(paid_by: str) -> int | None:
        return 2

    try:
        asked = await AnswerSearch(3, allowed, left).request_for(QUESTION, adapter.capabilities, "server")
    finally:
        await adapter.aclose()
    names = [tool.name for tool in asked.tools]
    if native is None:  # the bot's own search tool serves the route; no native search is asked
        assert asked.web_search is None and WEB_SEARCH_TOOL in names
    else:  # the provider searches itself, within what the member has left today
        assert asked.web_search is not None and asked.web_search.max_searches == 2
        assert WEB_SEARCH_TOOL not in names and "roll_dice" in names


# `provider == "x"`, `provider != 'x'`, `provider in ("x", ...)`: a name compared as a string.
STRING_COMPARISON = re.compile(
    r"provider[a-z_]*\s*(==|!=)\s*[\"']|provider[a-z_]*\s+(not\s+)?in\s*[\(\[{]\s*[\"']")


def test_no_product_code_compares_a_provider_name_as_a_string():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for folder in ("bot", "providers", "stream") for path in sorted((ROOT / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), start=1)
             if STRING_COMPARISON.search(line)]
    assert found == []
