"""`/model params` reaches Anthropic and Gemini models in the form each takes, and never a
model that refuses it: Claude's budget or adaptive thinking and its temperature
(providers/anthropic_native/models.py), Gemini's thinking (none for Gemini 1.x/2.0, Gemma).
The request bodies the replay server received through the real anthropic and google-genai
SDKs."""

from __future__ import annotations

import pytest

from providers import ChatRequest, Message
from tests.support.data_anthropic import ANTHROPIC_THINK_TOOLS
from tests.support.data_gemini import GEMINI_THINK_TEXT
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import Reply

HIGH = ChatRequest(messages=[Message("user", "think first")], reasoning_effort="high", temperature=0.3)
NO_REASONING = ChatRequest(messages=[Message("user", "just answer")], temperature=0.3)

# (model, thinking sent, temperature sent when thinking is off)
CLAUDE = [("claude-sonnet-4-5-20250929", {"type": "enabled", "budget_tokens": 16384}, True),
          ("claude-opus-4-1", {"type": "enabled", "budget_tokens": 16384}, True),
          ("claude-haiku-4-5-20251001", {"type": "enabled", "budget_tokens": 16384}, True),
          ("claude-3-7-sonnet-latest", {"type": "enabled", "budget_tokens": 16384}, True),
          ("claude-opus-4-6", {"type": "adaptive"}, True),
          ("claude-opus-4-7", {"type": "adaptive"}, False),
          ("claude-sonnet-5", {"type": "adaptive"}, False),
          ("claude-fable-5-1", {"type": "adaptive"}, False),
          ("claude-mythos-preview", {"type": "adaptive"}, False),
          ("claude-3-5-sonnet-20241022", None, True), ("claude-3-5-haiku-latest", None, True),
          ("claude-3-opus-20240229", None, True), ("claude-3-haiku-20240307", None, True),
          ("claude-2.1", None, True)]
GEMINI = [("gemini-2.5-pro", True), ("gemini-2.5-flash-lite", True), ("gemini-3-pro-preview", True),
          ("gemini-flash-latest", True), ("gemini-2.0-flash-thinking-exp-01-21", True),
          ("gemini-2.0-flash", False), ("gemini-2.0-flash-lite-001", False), ("gemini-1.5-pro", False),
          ("gemma-3-27b-it", False)]


@pytest.mark.parametrize(("model", "thinking", "temperature"), CLAUDE, ids=[m for m, *_ in CLAUDE])
async def test_claude_thinking_and_temperature_in_the_form_the_model_takes(
        provider_server, model, thinking, temperature):
    await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS), HIGH, model=model)
    body = provider_server.requests[-1].json
    assert body["model"] == model and body.get("thinking") == thinking
    if thinking is None:  # the rest of the settings still apply
        assert body.get("temperature") == (0.3 if temperature else None)
    else:
        assert "temperature" not in body  # thinking takes only the default
        assert body["max_tokens"] > 16384  # room for the answer beside the thinking
        assert ("output_config" in body) == (thinking["type"] == "adaptive")
    if thinking == {"type": "adaptive"}:
        assert body["output_config"] == {"effort": "high"}
    await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS), NO_REASONING,
                         model=model)
    body = provider_server.requests[-1].json
    assert "thinking" not in body and "output_config" not in body
    assert body.get("temperature") == (0.3 if temperature else None)


@pytest.mark.parametrize(("model", "thinks"), GEMINI, ids=[m for m, _ in GEMINI])
async def test_gemini_thinking_only_where_the_model_takes_it(provider_server, model, thinks):
    await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT), HIGH, model=model)
    config = provider_server.requests[-1].json["generationConfig"]
    assert config["temperature"] == 0.3
    if thinks:
        assert config["thinkingConfig"] == {"thinkingBudget": 24576, "includeThoughts": True}
    else:
        assert "thinkingConfig" not in config
