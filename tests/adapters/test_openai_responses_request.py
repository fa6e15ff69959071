"""The Responses request as the real openai SDK sends it to the replay server: what each
model takes, the conversation as input items, and the stateless replay of a tool round
(OpenAI's own input checks enforced by tests/support/rules_openai.py)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from providers import (
    ChatRequest,
    FunctionCall,
    Message,
    ToolSpec,
    create_adapter,
    normalized_stream,
)
from providers.capabilities import capabilities_of
from providers.continuation import CONTINUE_ASK
from providers.model_capabilities import RouteHints
from providers.openai_responses.request import REASONING_ITEMS, build_body, untyped_arguments
from providers.types import DocumentPart, ImagePart, TextPart, WebSearch
from tests.support import data_openai_responses as rx
from tests.support.data_openai import TOOLS
from tests.support.drive_adapter import served_outcome, summarize
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_openai import ResponsesRules

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
TEXT = Reply(body=rx.sse_body(rx.TEXT))
HI = [Message("user", "hi")]


async def sent(server, request: ChatRequest, model: str = "gpt-4o", provider: str = "openai",
               **options: Any) -> dict[str, Any]:
    """The body the SDK sent for `request`; the stream must have ended well."""
    server.reply(TEXT)
    out = await served_outcome(server, provider, request=request, model=model, **options)
    assert out.error is None, out.error
    assert server.requests[-1].path == "/v1/responses"
    return server.requests[-1].json


async def test_a_plain_question(provider_server):
    body = await sent(provider_server, ChatRequest(messages=HI, system="Be brief.", max_output_tokens=300,
                                                   temperature=0.4, extra={"user": "guild-1"}))
    assert body == {
        "model": "gpt-4o", "stream": True, "store": False, "instructions": "Be brief.",
        "input": [{"role": "user", "content": "hi"}],
        "max_output_tokens": 300, "temperature": 0.4, "user": "guild-1",
    }
    assert provider_server.requests[-1].api_key == "sk-test"


REASONING_CASES = [
    ("o4-mini", "high", None, {"effort": "high", "summary": "auto"}),
    ("gpt-5", "low", None, {"effort": "low", "summary": "auto"}),
    ("gpt-5.6-terra", "medium", None, {"effort": "medium", "summary": "auto"}),
    ("gpt-6-astra", None, None, {"summary": "auto"}),
    ("gpt-5.1", None, 2048, {"effort": "low", "summary": "auto"}),  # a budget maps to an effort
    ("gpt-5.1", "low", 16384, {"effort": "high", "summary": "auto"}),  # an explicit budget wins
    ("o3", "extreme", None, {"summary": "auto"}),  # a word the model does not take is left out
]


@pytest.mark.parametrize(("model", "effort", "budget", "expected"), REASONING_CASES)
async def test_a_reasoning_model_gets_its_effort_a_summary_and_its_encrypted_reasoning(
        provider_server, model, effort, budget, expected):
    request = ChatRequest(messages=HI, reasoning_effort=effort, thinking_budget=budget, temperature=0.3)
    body = await sent(provider_server, request, model=model)
    assert body["reasoning"] == expected
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "temperature" not in body  # a reasoning model refuses it


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4.1", "gpt-5-chat-latest", "m-test"])
async def test_a_model_that_does_not_reason_gets_no_reasoning_and_keeps_its_temperature(provider_server, model):
    body = await sent(provider_server, ChatRequest(messages=HI, reasoning_effort="high", temperature=0.3),
                      model=model)
    assert "reasoning" not in body and "include" not in body
    assert body["temperature"] == 0.3


@pytest.mark.parametrize("model", ["o1-mini", "o1-preview"])
async def test_o1_mini_and_preview_take_neither_an_effort_nor_a_temperature(provider_server, model):
    body = await sent(provider_server, ChatRequest(messages=HI, reasoning_effort="high", temperature=0.3),
                      model=model)
    assert "reasoning" not in body and "temperature" not in body


async def test_function_tools_are_flat_and_not_strict(provider_server):
    body = await sent(provider_server, ChatRequest(messages=HI, tools=TOOLS, reasoning_effort="high"),
                      model="gpt-5.6-terra")
    assert body["tools"] == [
        {"type": "function", "name": tool.name, "description": tool.description,
         "parameters": dict(tool.parameters), "strict": False} for tool in TOOLS]
    assert body["reasoning"]["effort"] == "high"  # next to the tools, which Chat Completions refuses
    assert "max_tool_calls" not in body


async def test_native_search_rides_next_to_the_functions_bounded_by_max_tool_calls(provider_server):
    own_search = ToolSpec("web_search", "The bot's own search", {"type": "object", "properties": {}})
    request = ChatRequest(messages=HI, tools=(*TOOLS, own_search), web_search=WebSearch(max_searches=2))
    body = await sent(provider_server, request, model="gpt-5")
    assert [tool.get("name", tool["type"]) for tool in body["tools"]] == ["get_time", "get_weather", "web_search"]
    assert body["tools"][-1] == {"type": "web_search"}
    assert body["max_tool_calls"] == 2


@pytest.mark.parametrize(("model", "search"), [("gpt-4.1-nano", None), ("gpt-4o", WebSearch(max_searches=0)),
                                               ("gpt-4o", None)])
async def test_no_search_tool_where_the_model_or_the_request_has_none(provider_server, model, search):
    body = await sent(provider_server, ChatRequest(messages=HI, web_search=search), model=model)
    assert "tools" not in body and "max_tool_calls" not in body


async def test_images_documents_and_speakers_in_user_turns(provider_server):
    pdf = DocumentPart("application/pdf", PDF, "report.pdf", text="Quarterly numbers.")
    request = ChatRequest(messages=[
        Message("user", [TextPart("what is in these?"), ImagePart("image/png", PNG), pdf], name="alice"),
        Message("user", "and you?", name="Bob Smith"),
    ])
    on_files = await sent(provider_server, request, model="gpt-5")
    on_text = await sent(provider_server, request, model="gpt-3.5-turbo")
    image = {"type": "input_image", "image_url": f"data:image/png;base64,{ImagePart('image/png', PNG).base64()}",
             "detail": "auto"}
    assert on_files["input"] == [
        {"role": "user", "content": [
            {"type": "input_text", "text": "alice: what is in these?"}, image,
            {"type": "input_file", "filename": "report.pdf", "file_data": f"data:application/pdf;base64,{pdf.base64()}"},
        ]},
        {"role": "user", "content": "Bob Smith: and you?"},
    ]
    assert on_text["input"][0]["content"][2] == {
        "type": "input_text", "text": "Document report.pdf:\n```\nQuarterly numbers.\n```"}


async def test_a_document_without_text_on_a_text_route_sends_no_empty_part(provider_server):
    scan = DocumentPart("application/pdf", PDF, "scan.pdf", text=None)
    body = await sent(provider_server, ChatRequest(messages=[Message("user", [TextPart("read it"), scan])]),
                      model="o3-mini")
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "read it"}]}]


async def test_a_partial_answer_is_continued_by_asking(provider_server):
    request = ChatRequest(messages=[Message("user", "count"), Message("assistant", "one, two,", partial_answer=True)])
    body = await sent(provider_server, request)
    assert body["input"][1:] == [
        {"role": "assistant", "content": "one, two,"},
        {"role": "user", "content": CONTINUE_ASK},
    ]


async def test_a_custom_endpoint_switched_to_responses_speaks_it(provider_server):
    hints = RouteHints(custom_api="responses", custom_reasoning_effort=True)
    body = await sent(provider_server, ChatRequest(messages=HI, reasoning_effort="low"), model="local-model",
                      provider="custom", hints=hints)
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert provider_server.requests[-1].path == "/v1/responses"


# ---- the untyped body ----------------------------------------------------------------------------------
RICH = ChatRequest(
    system="You are Bot.",
    messages=[
        Message("user", [TextPart("look"), ImagePart("image/png", PNG)], name="alice"),
        Message("assistant", "Looking.", tool_calls=[FunctionCall(
            "look", {"at": 1}, id="call_1", provider_fields={REASONING_ITEMS: [
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}]})]),
        Message("tool", '{"seen": "a cat"}', tool_call_id="call_1", name="look"),
        Message("assistant", "A cat."),
        Message("user", "thanks"),
    ],
    tools=[ToolSpec("look", "Look", {"type": "object", "properties": {"at": {"type": "integer"}}})],
    max_output_tokens=300, temperature=0.4, reasoning_effort="medium", web_search=WebSearch(max_searches=1),
    extra={"user": "guild-1"},
)


async def received(server, arguments: dict[str, Any]) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
    async with client.responses.with_streaming_response.create(**arguments) as response:
        await response.read()
    await client.close()
    return server.requests[-1].json


@pytest.mark.parametrize("model", ["gpt-5.6-terra", "gpt-4o", "o3-mini"])
async def test_the_untyped_body_is_the_typed_body(provider_server, model):
    provider_server.reply(TEXT)
    body = build_body(RICH, capabilities_of("openai", model))
    typed = await received(provider_server, body)
    untyped = await received(provider_server, untyped_arguments(body))
    assert untyped == typed == body


# ---- a tool round, replayed statelessly -----------------------------------------------------------------------
async def test_a_tool_round_replays_each_calls_reasoning_right_before_it():
    """Text, reasoning and two calls stream in; the next request carries the text, the
    reasoning items (whole, as the done events gave them) right before the call they led
    to, each call, and the results, which OpenAI's checks take."""
    stream = rx.sse_body([
        rx.created(),
        *rx.message(0, ["Let me check."]),
        *rx.reasoning(1, [["Weather for two cities."]], item="rs_a", encrypted="gAAAA-first-0123"),
        *rx.function_call(2, "call_paris", "get_weather", ['{"city": "Paris"}'], item="fc_1"),
        *rx.reasoning(3, [["Now Rome."]], item="rs_b", encrypted="gAAAA-second-4567"),
        *rx.function_call(4, "call_rome", "get_weather", ['{"city": "Rome"}'], item="fc_2"),
        rx.completed(rx.usage(30, 20, reasoning=12)),
    ])
    async with ProviderReplayServer(rules=[ResponsesRules()]) as server:
        server.reply(Reply(body=stream))
        ask = ChatRequest(messages=[Message("user", "weather in Paris and Rome?")], tools=TOOLS,
                          reasoning_effort="high")
        first = await served_outcome(server, "openai", request=ask, model="gpt-5.6-terra")
        assert (first.text, first.done.finish_reason) == ("Let me check.", "tool_calls")
        assert [(c.id, c.args) for c in first.calls] == [("call_paris", {"city": "Paris"}),
                                                         ("call_rome", {"city": "Rome"})]
        history = [*ask.messages, Message("assistant", first.text, tool_calls=first.calls),
                   Message("tool", '{"sky": "clear"}', tool_call_id="call_paris", name="get_weather"),
                   Message("tool", '{"sky": "rain"}', tool_call_id="call_rome", name="get_weather")]
        server.reply(TEXT)
        second = await served_outcome(server, "openai", model="gpt-5.6-terra",
                                      request=ChatRequest(messages=history, tools=TOOLS, reasoning_effort="high"))
        assert second.error is None, second.error
    assert server.requests[-1].json["input"] == [
        {"role": "user", "content": "weather in Paris and Rome?"},
        {"role": "assistant", "content": "Let me check."},
        {"type": "reasoning", "id": "rs_a", "summary": [{"type": "summary_text", "text": "Weather for two cities."}],
         "encrypted_content": "gAAAA-first-0123"},
        {"type": "function_call", "call_id": "call_paris", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "reasoning", "id": "rs_b", "summary": [{"type": "summary_text", "text": "Now Rome."}],
         "encrypted_content": "gAAAA-second-4567"},
        {"type": "function_call", "call_id": "call_rome", "name": "get_weather", "arguments": '{"city": "Rome"}'},
        {"type": "function_call_output", "call_id": "call_paris", "output": '{"sky": "clear"}'},
        {"type": "function_call_output", "call_id": "call_rome", "output": '{"sky": "rain"}'},
    ]


async def test_reasoning_that_led_to_text_or_a_search_is_not_replayed():
    stream = rx.sse_body([rx.created(), *rx.reasoning(0, [["Look it up."]], item="rs_search"),
                          *rx.web_search(1, "paris weather"), *rx.reasoning(2, [["Say so."]], item="rs_text"),
                          *rx.message(3, ["Checking."]), *rx.function_call(4, "call_1", "get_time", ['{"tz": "CET"}']),
                          rx.completed(rx.usage(3, 4))])
    async with ProviderReplayServer() as server:
        out = await served_outcome(server, "openai", Reply(body=stream), model="gpt-5")
    assert out.calls[0].provider_fields == {}


async def test_the_recorded_round_passes_openais_checks_when_replayed():
    """The recorded reasoning + call (tests/fixtures), replayed with its result."""
    async with ProviderReplayServer(rules=[ResponsesRules()]) as server:
        first = await served_outcome(server, "openai", Reply(body=rx.recorded("reasoning_summary_function_call")),
                                     request=ChatRequest(messages=[Message("user", "12+7, *3, *10")], tools=TOOLS),
                                     model="gpt-5")
        call = first.calls[0]
        encrypted = call.provider_fields[REASONING_ITEMS][0]["encrypted_content"]
        assert encrypted.startswith("gAAAAABpPDIVOKrs")  # the done event's whole content, not the added one's
        history = [Message("user", "12+7, *3, *10"), Message("assistant", "", tool_calls=[call]),
                   Message("tool", "19", tool_call_id=call.id, name=call.name)]
        server.reply(Reply(body=rx.recorded("text_after_tool_results")))
        adapter = create_adapter("openai", api_key="sk-test", model="gpt-5", base_url=f"{server.url}/v1")
        try:
            chunks = [c async for c in normalized_stream(adapter, ChatRequest(messages=history, tools=TOOLS))]
        finally:
            await adapter.aclose()
    assert summarize(chunks).text == "The final result is **570**."


async def test_without_the_rules_the_same_replay_broken_is_refused():
    """The checks themselves: a reasoning item without its encrypted content, one left at the
    end, and a result without its call are each refused with OpenAI's words."""
    broken = [
        [{"type": "reasoning", "id": "rs_1", "summary": []},
         {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}],
        [{"role": "user", "content": "hi"}, {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "x"}],
        [{"role": "user", "content": "hi"}, {"type": "function_call_output", "call_id": "call_9", "output": "1"}],
    ]
    messages = []
    async with ProviderReplayServer(rules=[ResponsesRules()]) as server:
        server.reply(TEXT)
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=f"{server.url}/v1", max_retries=0)
        for items in broken:
            with pytest.raises(openai.APIStatusError) as caught:
                await client.responses.create(model="gpt-5", input=items, store=False, stream=True)
            messages.append((caught.value.status_code, caught.value.body["message"]))
        await client.close()
    assert messages == [
        (404, "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. "
              "Try again with `store` set to true, or remove this item from your input."),
        (400, "Item 'rs_2' of type 'reasoning' was provided without its required following item."),
        (400, "No tool call found for function call output with call_id call_9."),
    ]
