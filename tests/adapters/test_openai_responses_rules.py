"""Why OpenAI moved to the Responses API, shown against OpenAI's own refusals
(tests/support/rules_openai.py) through the real openai SDK: the chat-completions path
fails, or loses the reasoning it was asked for, where the Responses adapter answers;
and what the Responses API refuses is healed where it names one parameter."""

from __future__ import annotations

import json

from providers import ChatRequest, Message, create_adapter, normalized_stream
from providers.client_pool import ClientPool
from providers.endpoint_check import EndpointPolicy
from providers.model_capabilities import RouteHints
from providers.openai_compat.adapter import OpenAICompatAdapter
from providers.openai_responses.adapter import OpenAIResponsesAdapter
from tests.support import data_openai as fx
from tests.support import data_openai_responses as rx
from tests.support.data_openai import TOOLS
from tests.support.drive_adapter import summarize
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_openai import ChatCompletionsToolsWithReasoning, ResponsesRules

RULES = [ChatCompletionsToolsWithReasoning(), ResponsesRules()]
WITH_TOOLS = ChatRequest(messages=[Message("user", "weather in Paris?")], tools=TOOLS, reasoning_effort="high")


async def stream(adapter, request: ChatRequest):
    try:
        return summarize([chunk async for chunk in normalized_stream(adapter, request)])
    finally:
        await adapter.aclose()


def chat(server, model: str) -> OpenAICompatAdapter:
    return OpenAICompatAdapter("openai", api_key="sk-test", model=model, base_url=f"{server.url}/v1", timeout=10)


async def test_gpt_5_5_loses_the_asked_effort_on_chat_completions_and_keeps_it_on_responses():
    """The refusal names `reasoning_effort`: the chat path heals by dropping it, so the
    answer comes without the reasoning asked for; the Responses adapter sends both at once."""
    async with ProviderReplayServer(rules=RULES) as server:
        server.reply(Reply(body=fx.sse_body(fx.TEXT)))
        downgraded = await stream(chat(server, "gpt-5.5"), WITH_TOOLS)
        sent = [(request.path, request.json.get("reasoning_effort")) for request in server.requests]
        server.reply(Reply(body=rx.sse_body(rx.TEXT)))
        adapter = create_adapter("openai", api_key="sk-test", model="gpt-5.5", base_url=f"{server.url}/v1")
        assert isinstance(adapter, OpenAIResponsesAdapter)
        answered = await stream(adapter, WITH_TOOLS)
    assert downgraded.error is None
    assert sent == [("/v1/chat/completions", "high"), ("/v1/chat/completions", None)]
    assert (answered.error, answered.text) == (None, "Hello there.")
    assert server.requests[-1].path == "/v1/responses"
    body = server.requests[-1].json
    assert (body["reasoning"]["effort"], [t["name"] for t in body["tools"]]) == ("high", ["get_time", "get_weather"])


async def test_the_chat_completions_refusal_is_openais_own_wording():
    """Without healing (a second refusal would be the third request), the 400 reads as
    OpenAI words it for gpt-5.4 and 5.5."""
    rule = ChatCompletionsToolsWithReasoning()
    body = {"model": "gpt-5.4", "reasoning_effort": "low", "tools": [{"type": "function", "function": {}}]}
    refused = rule.refusal("/v1/chat/completions", body)
    assert refused is not None and refused.status == 400
    assert json.loads(refused.body)["error"] == {
        "message": "Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. "
                   "Please use /v1/responses instead.",
        "type": "invalid_request_error", "param": "reasoning_effort", "code": None}
    assert rule.refusal("/v1/chat/completions", {**body, "reasoning_effort": "none"}) is None
    assert rule.refusal("/v1/chat/completions", {**body, "model": "gpt-5.1"}) is None
    assert rule.refusal("/v1/responses", body) is None


async def test_gpt_5_6_on_chat_completions_fails_without_an_effort_and_loses_an_asked_one():
    """Its default reasoning is refused next to tools (nothing to heal), and an asked effort
    is healed to "none" as the refusal advises: the answer comes without the reasoning."""
    async with ProviderReplayServer(rules=RULES) as server:
        server.reply(Reply(body=fx.sse_body(fx.TEXT)))
        plain = ChatRequest(messages=WITH_TOOLS.messages, tools=TOOLS)
        failed = await stream(chat(server, "gpt-5.6-terra"), plain)
        downgraded = await stream(chat(server, "gpt-5.6-terra"), WITH_TOOLS)
        sent = [request.json.get("reasoning_effort") for request in server.requests]
        server.reply(Reply(body=rx.sse_body(rx.REASONING_CALLS)))
        adapter = create_adapter("openai", api_key="sk-test", model="gpt-5.6-terra", base_url=f"{server.url}/v1")
        answered = await stream(adapter, WITH_TOOLS)
    assert failed.error.message == (
        "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. "
        "To use function tools, use /v1/responses or set reasoning_effort to 'none'.")
    assert downgraded.error is None
    assert sent == [None, "high", "none"]
    assert answered.error is None and len(answered.calls) == 2
    assert server.requests[-1].json["reasoning"] == {"effort": "high", "summary": "auto"}


async def test_a_temperature_a_responses_server_refuses_is_healed_with_openais_body():
    """A custom endpoint on the Responses API cannot be known to refuse a temperature; the
    refusal (vercel/ai's recorded body for a reasoning model) drops it, once."""
    hints = RouteHints(custom_api="responses")
    async with ProviderReplayServer(rules=[ResponsesRules()]) as server:
        server.reply(Reply(body=rx.sse_body(rx.TEXT)))
        adapter = create_adapter("custom", api_key="sk-test", model="o4-mini", base_url=f"{server.url}/v1",
                                 hints=hints, endpoint_policy=EndpointPolicy(allow_private=True))
        out = await stream(adapter, ChatRequest(messages=[Message("user", "hi")], temperature=0.2))
    assert (out.error, out.text) == (None, "Hello there.")
    assert [request.json.get("temperature") for request in server.requests] == [0.2, None]


async def test_a_small_output_cap_is_raised_to_the_apis_minimum():
    async with ProviderReplayServer(rules=[ResponsesRules()]) as server:
        server.reply(Reply(body=rx.sse_body(rx.TEXT)))
        adapter = create_adapter("openai", api_key="sk-test", model="gpt-4o", base_url=f"{server.url}/v1")
        out = await stream(adapter, ChatRequest(messages=[Message("user", "hi")], max_output_tokens=5))
    assert out.error is None
    assert server.requests[-1].json["max_output_tokens"] == 16


async def test_an_unverified_organization_gets_its_answer_without_the_summary():
    """OpenAI refuses reasoning summaries to an organization that is not verified; the
    summary is dropped for the route, and the stream then carries none."""
    pool = ClientPool()
    async with ProviderReplayServer(rules=[ResponsesRules(verified=False)]) as server:
        server.reply(Reply(body=rx.sse_body(rx.REASONING_CALLS)))
        for _ in range(2):
            adapter = create_adapter("openai", api_key="sk-test", model="gpt-5", base_url=f"{server.url}/v1",
                                     clients=pool)
            out = await stream(adapter, WITH_TOOLS)
            assert out.error is None and out.thoughts == []
        await pool.aclose()
    reasoning = [request.json["reasoning"] for request in server.requests]
    # Refused, healed at once, then left out up front for the route.
    assert reasoning == [{"effort": "high", "summary": "auto"}, {"effort": "high"}, {"effort": "high"}]
