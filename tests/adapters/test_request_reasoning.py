"""`/model params reasoning` reaches each OpenAI-family provider in its own form, and only
for the models that take it: the request bodies the replay server received, through the
real openai SDK (the facts per provider are in providers/openai_compat/reasoning.py, and
for OpenAI itself, on the Responses API, in providers/openai_responses/capabilities.py)."""

from __future__ import annotations

from typing import Any

import pytest

from providers import ChatRequest, Message
from providers.endpoint_check import EndpointPolicy
from providers.model_capabilities import RouteHints
from tests.support import data_openai as fx
from tests.support import data_openai_responses as rx
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import Reply

# The replay server is on loopback; the operator also says custom endpoints take the effort.
OPERATOR_SAYS_SO = {"endpoint_policy": EndpointPolicy(allow_private=True),
                    "hints": RouteHints(custom_reasoning_effort=True)}
HIGH = ChatRequest(messages=[Message("user", "think first")], reasoning_effort="high")
BUDGET = ChatRequest(messages=[Message("user", "think first")], thinking_budget=2048)

# (provider, model, adapter options) -> the reasoning fields the body carries; every
# other reasoning field must be absent.
CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("openrouter", "openai/gpt-4o-mini", {}, {"reasoning": {"effort": "high"}}),
    ("openrouter", "anthropic/claude-sonnet-4", {}, {"reasoning": {"effort": "high"}}),
    ("deepseek", "deepseek-reasoner", {}, {}),
    ("deepseek", "deepseek-chat", {}, {}),
    ("deepseek", "deepseek-v4-flash", {}, {"reasoning_effort": "high", "thinking": {"type": "enabled"}}),
    ("zai", "glm-4.6", {}, {"thinking": {"type": "enabled"}}),
    ("zai", "glm-5", {}, {"thinking": {"type": "enabled"}}),
    ("zai", "glm-4.5-air", {}, {"thinking": {"type": "enabled"}}),
    ("zai", "glm-4-plus", {}, {}),
    ("custom", "o4-mini", {}, {}),
    ("custom", "gpt-oss-20b", OPERATOR_SAYS_SO, {"reasoning_effort": "high"}),
]
REASONING_FIELDS = ("reasoning_effort", "reasoning", "thinking")


def reasoning_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The reasoning fields of one received body (extra_body fields land at the top level)."""
    return {key: body[key] for key in REASONING_FIELDS if key in body}


@pytest.mark.parametrize(("provider", "model", "options", "expected"), CASES,
                         ids=[f"{p}-{m}{'-operator-on' if o else ''}" for p, m, o, _ in CASES])
async def test_reasoning_reaches_only_models_that_take_it(provider_server, provider, model, options, expected):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    await served_outcome(provider_server, provider, request=HIGH, model=model, **options)
    assert reasoning_fields(provider_server.requests[-1].json) == expected


@pytest.mark.parametrize(("provider", "model", "options"), [case[:3] for case in CASES],
                         ids=[f"{p}-{m}{'-operator-on' if o else ''}" for p, m, o, _ in CASES])
async def test_no_reasoning_asked_sends_none_anywhere(provider_server, provider, model, options):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    plain = ChatRequest(messages=[Message("user", "hi")])
    await served_outcome(provider_server, provider, request=plain, model=model, **options)
    assert reasoning_fields(provider_server.requests[-1].json) == {}


async def test_a_thinking_budget_goes_to_openrouter_as_max_tokens_and_to_openai_as_an_effort(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    await served_outcome(provider_server, "openrouter", request=BUDGET, model="anthropic/claude-sonnet-4")
    provider_server.reply(Reply(body=rx.sse_body(rx.TEXT)))
    await served_outcome(provider_server, "openai", request=BUDGET, model="o4-mini")
    openrouter, openai = (request.json for request in provider_server.requests[-2:])
    assert reasoning_fields(openrouter) == {"reasoning": {"max_tokens": 2048}}
    assert reasoning_fields(openai) == {"reasoning": {"effort": "low", "summary": "auto"}}


async def test_the_operators_switch_means_nothing_to_a_hosted_provider(provider_server):
    provider_server.reply(Reply(body=rx.sse_body(rx.TEXT)))
    await served_outcome(provider_server, "openai", request=HIGH, model="gpt-4o-mini",
                         **OPERATOR_SAYS_SO)
    assert reasoning_fields(provider_server.requests[-1].json) == {}


# OpenAI on the Responses API: (model, the `reasoning` object sent for HIGH, and for a
# request that asks none: every reasoning model shows its summary whether or not).
OPENAI_CASES = [
    ("o4-mini", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("o3-2025-04-16", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("o1", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("gpt-5", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("gpt-5-mini", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("gpt-5.1", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("gpt-oss-120b", {"effort": "high", "summary": "auto"}, {"summary": "auto"}),
    ("gpt-4o-mini", None, None),
    ("gpt-4.1", None, None),
    ("gpt-5-chat-latest", None, None),
    ("o1-mini", None, None),
    ("m-test", None, None),
]


@pytest.mark.parametrize(("model", "high", "plain"), OPENAI_CASES, ids=[m for m, _, _ in OPENAI_CASES])
async def test_openai_reasoning_reaches_only_models_that_take_it(provider_server, model, high, plain):
    provider_server.reply(Reply(body=rx.sse_body(rx.TEXT)))
    await served_outcome(provider_server, "openai", request=HIGH, model=model)
    await served_outcome(provider_server, "openai", request=ChatRequest(messages=HIGH.messages), model=model)
    sent_high, sent_plain = (request.json for request in provider_server.requests[-2:])
    assert (sent_high.get("reasoning"), sent_plain.get("reasoning")) == (high, plain)
    assert "reasoning_effort" not in sent_high  # the chat-completions field is not this API's


TEMPERATURE_CASES = [("openai", "gpt-4o-mini", True), ("openai", "gpt-5-chat-latest", True),
                     ("openai", "o4-mini", False), ("openai", "o1-mini", False), ("openai", "gpt-5.1", False),
                     ("openrouter", "openai/o4-mini", True), ("deepseek", "deepseek-reasoner", True),
                     ("zai", "glm-4.6", True), ("custom", "o4-mini", True)]


@pytest.mark.parametrize(("provider", "model", "sent"), TEMPERATURE_CASES,
                         ids=[f"{p}-{m}" for p, m, _ in TEMPERATURE_CASES])
async def test_a_temperature_never_reaches_an_openai_reasoning_model(provider_server, provider, model, sent):
    """OpenAI's reasoning models refuse any temperature but the default (a 400 for every
    answer); elsewhere the provider or the endpoint decides."""
    provider_server.reply(Reply(body=rx.sse_body(rx.TEXT) if provider == "openai" else fx.sse_body(fx.TEXT)))
    warm = ChatRequest(messages=[Message("user", "hi")], temperature=0.3)
    await served_outcome(provider_server, provider, request=warm, model=model)
    assert provider_server.requests[-1].json.get("temperature") == (0.3 if sent else None)
