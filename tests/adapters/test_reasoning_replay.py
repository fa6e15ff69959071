"""A tool-call turn carries its reasoning back where the thinking mode requires it, even
empty: DeepSeek refuses the turn without `reasoning_content` (tests/support/rules_chat.py
enforces it with DeepSeek's own words), Z.ai asks for it (the fake checks it), and a
custom endpoint whose stream carried the field gets it back. Through the real openai SDK
and the replay server, from the stream that made the call to the request that replays it.

Before, reasoning went back only when there was some (`if reasoning:` in the request
builder), so a thinking turn whose reasoning streamed empty lost the field, and DeepSeek
refused the next round. That old history is sent as it was made (a call without the
field), and the old rule is also expressed as capabilities
(`ModelCapabilities.replays_reasoning`, which the request builder reads).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from providers.adapter import normalized_stream
from providers.capabilities import capabilities_of
from providers.endpoint_check import EndpointPolicy
from providers.model_capabilities import ModelCapabilities
from providers.openai_compat import adapter as chat_adapter
from providers.openai_compat.request import REASONING_CONTENT
from providers.types import ChatRequest, FunctionCall, Message, ToolSpec
from tests.support.data_openai import chunk, sse_body, tool_delta, usage_chunk
from tests.support.drive_adapter import StreamOutcome, summarize
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_chat import REASONER_REFUSED, V4_REFUSED, DeepSeekRules, ZaiRules

TIME = ToolSpec("current_time", "The time in a timezone",
                {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]})
QUESTION = Message("user", "What time is it in Tokyo?")
ASK = ChatRequest(messages=[QUESTION], tools=[TIME])
ANSWER = sse_body([chunk({"role": "assistant", "content": "It is evening."}), chunk({}, "stop"), usage_chunk()])


def call_stream(reasoning: list[str] | None) -> bytes:
    """A thinking model's tool call; `reasoning`: its `reasoning_content` pieces (None: the
    stream never carries the field; [""]: it carries it empty, as DeepSeek's first delta does)."""
    events = [chunk({"role": "assistant", "content": None})]
    events += [chunk({"content": None, "reasoning_content": piece}) for piece in reasoning or ()]
    events += [chunk({"tool_calls": [tool_delta(0, id="call_0", name="current_time",
                                                arguments='{"timezone": "Asia/Tokyo"}')]}),
               chunk({"content": ""}, "tool_calls"), usage_chunk()]
    return sse_body(events)


@pytest.fixture
async def chat():
    deepseek, zai = DeepSeekRules(), ZaiRules()
    async with ProviderReplayServer(rules=[deepseek, zai]) as server:
        yield server, deepseek, zai


async def answer(server: ProviderReplayServer, capabilities: ModelCapabilities, request: ChatRequest) -> StreamOutcome:
    """One request built with `capabilities`, through the real openai SDK and the chat adapter."""
    adapter = chat_adapter.create(capabilities.provider, api_key="sk-test", model=capabilities.model,
                                  base_url=f"{server.url}/v1", capabilities=capabilities, timeout=10,
                                  endpoint_policy=EndpointPolicy(allow_private=True))
    try:
        return summarize([chunk async for chunk in normalized_stream(adapter, request)])
    finally:
        await adapter.aclose()


def follow_up(calls: list[FunctionCall]) -> ChatRequest:
    """The tool loop's next request: the model's turn with its calls, then the result."""
    return dataclasses.replace(ASK, messages=[QUESTION, Message("assistant", "", tool_calls=calls),
                                              Message("tool", '{"time": "19:04"}', tool_call_id=calls[0].id)])


async def round_trip(server, capabilities: ModelCapabilities, reasoning: list[str] | None) -> tuple[StreamOutcome, dict]:
    """The call streamed, then the request that replays it: its outcome and assistant turn."""
    server.enqueue(Reply(body=call_stream(reasoning)), Reply(body=ANSWER))
    first = await answer(server, capabilities, ASK)
    assert first.error is None and first.done.finish_reason == "tool_calls"
    second = await answer(server, capabilities, follow_up(first.calls))
    return second, server.requests[-1].json["messages"][1]


def replaying_only_what_streamed(provider: str, model: str) -> ModelCapabilities:
    """The rule of before: reasoning went back only when the stream had some."""
    return dataclasses.replace(capabilities_of(provider, model), replays_reasoning=False)


# ---- DeepSeek ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("model", "refused"), [
    ("deepseek-v4-flash", V4_REFUSED), ("deepseek-v4-pro", V4_REFUSED),
    ("deepseek-reasoner", REASONER_REFUSED.format(index=1)),
])
async def test_a_thinking_turn_without_its_reasoning_is_refused_with_deepseeks_words(chat, model, refused):
    """The old history: the call's reasoning was empty, so the turn went without the field."""
    server, _, _ = chat
    old = await answer(server, replaying_only_what_streamed("deepseek", model),
                       follow_up([FunctionCall("current_time", {"timezone": "Asia/Tokyo"}, id="call_0")]))
    assert REASONING_CONTENT not in server.requests[-1].json["messages"][1]
    assert old.error is not None and old.error.status == 400
    assert refused in json.dumps(old.error.details) or refused in old.error.message
    assert len(server.requests) == 1  # not a parameter to heal: the request is what it was


@pytest.mark.parametrize("model", ["deepseek-v4-flash", "deepseek-reasoner"])
@pytest.mark.parametrize("reasoning", [None, [""]], ids=["no-field", "empty"])
async def test_an_empty_reasoning_goes_back_empty_and_deepseek_takes_it(chat, model, reasoning):
    server, deepseek, _ = chat
    second, turn = await round_trip(server, capabilities_of("deepseek", model), reasoning)
    assert second.error is None and second.text == "It is evening."
    assert turn[REASONING_CONTENT] == ""
    # The same request as the old builder made it (the empty reasoning skipped): refused.
    sent = server.requests[-1]
    old = json.loads(json.dumps(sent.json))
    del old["messages"][1][REASONING_CONTENT]
    assert deepseek.refusal(sent.path, old).status == 400


async def test_the_reasoning_that_led_to_the_call_goes_back_whole(chat):
    server, _, _ = chat
    second, turn = await round_trip(server, capabilities_of("deepseek", "deepseek-v4-pro"),
                                    ["", "The user wants ", "the time."])
    assert second.error is None and turn[REASONING_CONTENT] == "The user wants the time."


async def test_deepseek_chat_does_not_think_and_gets_no_field(chat):
    server, _, _ = chat
    second, turn = await round_trip(server, capabilities_of("deepseek", "deepseek-chat"), None)
    assert second.error is None and REASONING_CONTENT not in turn


# ---- Z.ai -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["glm-4.5", "glm-4.6", "glm-4.7", "glm-5", "glm-4.5-air"])
async def test_glm_thinking_turns_carry_their_reasoning_back(chat, model):
    server, _, zai = chat
    second, turn = await round_trip(server, capabilities_of("zai", model), None)
    assert second.error is None and turn[REASONING_CONTENT] == ""
    assert zai.unreplayed[-1] == []  # the fake's check: every tool turn came back with it
    await round_trip(server, replaying_only_what_streamed("zai", model), None)
    assert zai.unreplayed[-1] == [1]  # the old history lacked it


async def test_an_older_glm_has_no_thinking_to_replay(chat):
    server, _, zai = chat
    second, turn = await round_trip(server, capabilities_of("zai", "glm-4-plus"), None)
    assert second.error is None and REASONING_CONTENT not in turn and zai.unreplayed == []


# ---- custom endpoints -------------------------------------------------------------------------------
@pytest.mark.parametrize(("reasoning", "replayed"), [
    (None, None), ([""], ""), (["Tokyo is UTC+9."], "Tokyo is UTC+9."),
])
async def test_a_custom_endpoint_gets_the_field_back_when_its_stream_carried_it(chat, reasoning, replayed):
    """A server of one's own (a Kimi or DeepSeek behind a gateway) may require it too: the
    stream that carried `reasoning_content` is the evidence."""
    server, _, _ = chat
    second, turn = await round_trip(server, capabilities_of("custom", "kimi-k2-thinking"), reasoning)
    assert second.error is None
    assert turn.get(REASONING_CONTENT) == replayed


async def test_openrouter_keeps_reasoning_its_own_way_and_gets_no_reasoning_content(chat):
    """OpenRouter keeps a model's reasoning through `reasoning_details`: a stream that also
    carried `reasoning_content` (an upstream's own field) does not make its calls send it."""
    server, _, _ = chat
    second, turn = await round_trip(server, capabilities_of("openrouter", "deepseek/deepseek-v4-flash"),
                                    ["Tokyo is UTC+9."])
    assert second.error is None and REASONING_CONTENT not in turn
