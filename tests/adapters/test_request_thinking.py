"""`/model params` reaches Anthropic and Gemini models in the form each takes, and never a
model that refuses it: Claude's budget or adaptive thinking, shown as a summary, and no
sampling parameter at all (providers/anthropic_native/capabilities.py), Gemini's thinking
budget (2.5) or level (3 and later; none for Gemini 1.x/2.0, Gemma). The request bodies
the replay server received through the real anthropic and google-genai SDKs, from a
server that refuses what the providers document they refuse (tests/support/rules_*.py),
so a body of the wrong form fails here as it would there."""

from __future__ import annotations

import pytest

from providers import ChatRequest, Message
from tests.support.data_anthropic import ANTHROPIC_THINK_TOOLS
from tests.support.data_gemini import GEMINI_THINK_TEXT
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_anthropic import SAMPLING, AnthropicRules
from tests.support.rules_gemini import GeminiRules

HIGH = ChatRequest(messages=[Message("user", "think first")], reasoning_effort="high", temperature=0.3)
NO_REASONING = ChatRequest(messages=[Message("user", "just answer")], temperature=0.3)

BUDGET = {"type": "enabled", "budget_tokens": 16384}
# Adaptive thinking asks its summary shown: from Opus 4.7 on it streams empty otherwise.
ADAPTIVE = {"type": "adaptive", "display": "summarized"}
# (model, thinking sent)
CLAUDE = [("claude-sonnet-4-5-20250929", BUDGET), ("claude-opus-4-1", BUDGET),
          ("claude-haiku-4-5-20251001", BUDGET), ("claude-3-7-sonnet-latest", BUDGET),
          ("claude-opus-4-6", ADAPTIVE), ("claude-opus-4-7", ADAPTIVE), ("claude-sonnet-5", ADAPTIVE),
          ("claude-fable-5-1", ADAPTIVE), ("claude-mythos-preview", ADAPTIVE),
          ("claude-3-5-sonnet-20241022", None), ("claude-3-5-haiku-latest", None),
          ("claude-3-opus-20240229", None), ("claude-3-haiku-20240307", None), ("claude-2.1", None)]
BUDGET_HIGH = {"thinkingBudget": 24576, "includeThoughts": True}
# (model, thinking config sent for a high effort): a budget on 2.5, the model's own level
# on 3 and later, none where the model has no thinking.
GEMINI = [("gemini-2.5-pro", BUDGET_HIGH), ("gemini-2.5-flash-lite", BUDGET_HIGH),
          ("gemini-2.0-flash-thinking-exp-01-21", BUDGET_HIGH),
          ("gemini-3-pro-preview", {"thinkingLevel": "high", "includeThoughts": True}),
          ("gemini-3.5-flash", {"thinkingLevel": "high", "includeThoughts": True}),
          ("gemini-flash-latest", {"thinkingLevel": "high", "includeThoughts": True}),
          ("gemini-2.0-flash", None), ("gemini-2.0-flash-lite-001", None), ("gemini-1.5-pro", None),
          ("gemma-3-27b-it", None)]


@pytest.fixture
async def ruled_server():
    async with ProviderReplayServer(rules=[AnthropicRules(), GeminiRules()]) as server:
        yield server


@pytest.mark.parametrize(("model", "thinking"), CLAUDE, ids=[m for m, _ in CLAUDE])
async def test_claude_thinking_in_the_form_the_model_takes_and_no_sampling_parameter(
        ruled_server, model, thinking):
    out = await served_outcome(ruled_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS), HIGH, model=model)
    assert out.error is None, out.error
    [sent] = ruled_server.requests  # taken as sent: nothing was refused and healed
    body = sent.json
    assert body["model"] == model and body.get("thinking") == thinking
    assert not set(SAMPLING) & set(body)  # API version 2026-10-21 refuses them on every model
    if thinking is not None:
        assert body["max_tokens"] > 16384  # room for the answer beside the thinking
        assert ("output_config" in body) == (thinking["type"] == "adaptive")
    if thinking == ADAPTIVE:
        assert body["output_config"] == {"effort": "high"}
    await served_outcome(ruled_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS), NO_REASONING,
                         model=model)
    assert len(ruled_server.requests) == 2
    body = ruled_server.requests[-1].json
    assert "thinking" not in body and "output_config" not in body
    assert not set(SAMPLING) & set(body)  # the server's temperature goes nowhere on Claude


@pytest.mark.parametrize(("model", "thinking"), GEMINI, ids=[m for m, _ in GEMINI])
async def test_gemini_thinking_in_the_form_the_model_takes(ruled_server, model, thinking):
    out = await served_outcome(ruled_server, "google", Reply(body=GEMINI_THINK_TEXT), HIGH, model=model)
    assert out.error is None, out.error
    config = ruled_server.requests[-1].json["generationConfig"]
    assert config["temperature"] == 0.3
    assert config.get("thinkingConfig") == thinking
