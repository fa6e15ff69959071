"""Gemini's thinking forms and tool context against a fake that enforces what Google
documents (tests/support/rules_gemini.py), through the real google-genai SDK.

The old rules are expressed as capabilities (`ModelCapabilities.reasoning`, which the
request builder reads): "every thinking Gemini takes a budget" before, a level where the
model needs one today. Neither refusal names a field the adapter could heal, so the old
body's failure is the stream's own error. The server-side search parts of Gemini 3's
tool combination (`toolCall` / `toolResponse`) are kept from the stream and replayed in
the next round; the fake checks they came back (Google asks for them "exactly as
received" but documents no refusal without them), and the old replay, without them, fails
that check.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from google.genai import types as genai_types

from providers.adapter import normalized_stream
from providers.capabilities import capabilities_of
from providers.gemini import adapter as gemini_adapter
from providers.gemini.request import SERVER_TOOL_PARTS, build_contents
from providers.model_capabilities import ModelCapabilities, Reasoning
from providers.types import ChatRequest, FunctionCall, Message, ToolSpec, WebSearch
from tests.support.data_gemini import GEMINI_THINK_TEXT
from tests.support.data_gemini_search import (
    CALL_SIG,
    SEARCH_CALL_PART,
    SEARCH_RESULT_PART,
    search_then_call,
)
from tests.support.drive_adapter import StreamOutcome, summarize
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_gemini import BUDGET_REFUSED, LEVEL_REFUSED, GeminiRules

KEY = "AIza-test-key-0000"
HIGH = ChatRequest(messages=[Message("user", "think first")], reasoning_effort="high")
WEATHER = ToolSpec("get_weather", "Current weather in a city",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
QUESTION = Message("user", "Who won Euro 2024, and what is the weather in Berlin?")
SEARCHING = ChatRequest(messages=[QUESTION], tools=[WEATHER], web_search=WebSearch(max_searches=2))
MODEL = "gemini-3.5-flash"


@pytest.fixture
async def gemini():
    rules = GeminiRules()
    async with ProviderReplayServer(rules=[rules]) as server:
        server.reply(Reply(body=GEMINI_THINK_TEXT))
        yield server, rules


async def answer(server: ProviderReplayServer, capabilities: ModelCapabilities, request: ChatRequest) -> StreamOutcome:
    """One request built with `capabilities`, through the real SDK and the Gemini adapter."""
    adapter = gemini_adapter.create("google", api_key=KEY, model=capabilities.model, base_url=server.url,
                                    capabilities=capabilities, timeout=10)
    try:
        return summarize([chunk async for chunk in normalized_stream(adapter, request)])
    finally:
        await adapter.aclose()


def with_reasoning(model: str, reasoning: Reasoning) -> ModelCapabilities:
    return dataclasses.replace(capabilities_of("google", model), reasoning=reasoning)


def refused_with(out: StreamOutcome, message: str) -> None:
    assert out.error is not None and out.done is None
    assert out.error.status == 400
    assert message in json.dumps(out.error.details) or message in out.error.message


# ---- thinking forms ------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["gemini-3.5-flash", "gemini-3.5-pro", "gemini-4-flash"])
async def test_a_budget_from_gemini_3_5_is_refused_and_today_a_level_is_sent(gemini, model):
    server, _ = gemini
    old = await answer(server, with_reasoning(model, Reasoning("budget", summarized=True)), HIGH)
    assert server.requests[-1].json["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 24576,
                                                                              "includeThoughts": True}
    refused_with(old, BUDGET_REFUSED)
    today = await answer(server, capabilities_of("google", model), HIGH)
    assert today.error is None and today.done is not None
    assert server.requests[-1].json["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high",
                                                                              "includeThoughts": True}
    assert len(server.requests) == 2  # nothing healed: the refusal names no field to leave out


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.0-flash-thinking-exp-01-21"])
async def test_a_level_before_gemini_3_is_refused_and_today_a_budget_is_sent(gemini, model):
    server, _ = gemini
    old = await answer(server, with_reasoning(model, Reasoning("level", ("low", "medium", "high"), True)), HIGH)
    refused_with(old, LEVEL_REFUSED)
    today = await answer(server, capabilities_of("google", model), HIGH)
    assert today.error is None
    assert server.requests[-1].json["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 24576,
                                                                              "includeThoughts": True}


@pytest.mark.parametrize(("model", "effort", "level"), [
    ("gemini-3-pro-preview", "medium", "high"),  # Gemini 3 Pro takes low and high only
    ("gemini-3-pro-preview", "low", "low"),
    ("gemini-3.5-flash", "medium", "medium"), ("gemini-3-flash-preview", "low", "low"),
])
async def test_gemini_3_gets_the_nearest_level_it_takes(gemini, model, effort, level):
    server, _ = gemini
    out = await answer(server, capabilities_of("google", model),
                       ChatRequest(messages=[Message("user", "x")], reasoning_effort=effort))
    assert out.error is None
    assert server.requests[-1].json["generationConfig"]["thinkingConfig"]["thinkingLevel"] == level


# ---- server-side tool parts ----------------------------------------------------------------------
async def first_round(server: ProviderReplayServer) -> StreamOutcome:
    server.reply(Reply(body=search_then_call("get_weather", {"city": "Berlin"})))
    out = await answer(server, capabilities_of("google", MODEL), SEARCHING)
    assert out.error is None and out.done.finish_reason == "tool_calls"
    return out


def follow_up(out: StreamOutcome, calls: list[FunctionCall]) -> ChatRequest:
    """The tool loop's next request: the model's turn with its calls, then the result."""
    return dataclasses.replace(SEARCHING, messages=[
        QUESTION, Message("assistant", out.text, tool_calls=calls),
        Message("tool", '{"temp_c": 3}', tool_call_id=calls[0].id, name=calls[0].name)])


async def test_the_search_parts_are_kept_on_the_call_they_led_to(gemini):
    server, _ = gemini
    out = await first_round(server)
    [call] = out.calls
    assert (call.name, call.args, call.id, call.thought_signature) == ("get_weather", {"city": "Berlin"},
                                                                      "m4q8z1v6", CALL_SIG)
    assert call.provider_fields[SERVER_TOOL_PARTS] == [SEARCH_CALL_PART, SEARCH_RESULT_PART]
    assert out.text == "Let me check. "  # the search itself shows nothing
    for part in call.provider_fields[SERVER_TOOL_PARTS]:  # the SDK's own Part shape
        parsed = genai_types.Part.model_validate(part)
        assert (parsed.tool_call or parsed.tool_response).tool_type == genai_types.ToolType.GOOGLE_SEARCH_WEB
        assert parsed.thought_signature


async def test_the_next_round_replays_them_in_order_before_the_call_and_the_fake_sees_them_back(gemini):
    server, rules = gemini
    out = await first_round(server)
    server.reply(Reply(body=GEMINI_THINK_TEXT))
    second = await answer(server, capabilities_of("google", MODEL), follow_up(out, out.calls))
    assert second.error is None
    model_turn = server.requests[-1].json["contents"][1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"] == [
        SEARCH_CALL_PART, SEARCH_RESULT_PART, {"text": "Let me check. "},
        {"functionCall": {"name": "get_weather", "args": {"city": "Berlin"}, "id": "m4q8z1v6"},
         "thoughtSignature": CALL_SIG},
    ]
    [check] = rules.circulation
    assert check.kept, check


async def test_the_old_replay_without_them_fails_the_check(gemini):
    """Before, the stream kept no server-side part: the model turn came back without the
    search it ran, which Google asks to be returned exactly as received."""
    server, rules = gemini
    out = await first_round(server)
    bare = [dataclasses.replace(call, provider_fields={key: value for key, value in call.provider_fields.items()
                                                       if key != SERVER_TOOL_PARTS}) for call in out.calls]
    server.reply(Reply(body=GEMINI_THINK_TEXT))
    await answer(server, capabilities_of("google", MODEL), follow_up(out, bare))
    [check] = rules.circulation
    assert not check.kept
    assert [part for part in check.echoed if isinstance(part, dict)] == []  # no server-side part came back


def test_each_call_is_preceded_by_its_own_server_parts():
    """Two searches, each before its own call: each goes back before the call it led to;
    the first call's parts open the turn (the search ran before the text)."""
    other = {"toolCall": {"toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": ["berlin time"]}, "id": "s2"},
             "thoughtSignature": "c2ln"}
    calls = [FunctionCall("get_weather", {"city": "Berlin"}, id="c1",
                          provider_fields={SERVER_TOOL_PARTS: [SEARCH_CALL_PART, SEARCH_RESULT_PART]}),
             FunctionCall("get_time", {"tz": "Europe/Berlin"}, id="c2", provider_fields={SERVER_TOOL_PARTS: [other]})]
    contents, _ = build_contents([QUESTION, Message("assistant", "Checking.", tool_calls=calls)])
    parts = contents[1]["parts"]
    assert [next(iter(set(part) - {"thoughtSignature"})) for part in parts] == [
        "toolCall", "toolResponse", "text", "functionCall", "toolCall", "functionCall"]
    assert parts[4] == other and parts[0] == SEARCH_CALL_PART


async def test_a_server_part_that_is_not_an_object_is_a_malformed_stream(gemini):
    server, _ = gemini
    from tests.support.data_gemini import g_chunk, gemini_body

    server.reply(Reply(body=gemini_body([g_chunk([{"toolCall": "search!"}], "STOP")])))
    out = await answer(server, capabilities_of("google", MODEL), SEARCHING)
    assert out.error is not None and "toolCall is not an object" in out.error.message
