"""The Anthropic adapter through the replay server and the real anthropic SDK.

Own fixtures, every anthropic corpus stream and every anthropic error body, the request
the SDK sends, timeouts, connection failures and the SDK's typed mid-stream error.
"""

from __future__ import annotations

import json

import anthropic
import pytest

from providers.adapter import create_adapter, normalized_stream
from providers.anthropic_native.request import THINKING_BLOCKS, build_arguments
from providers.capabilities import capabilities_of
from providers.types import ChatRequest, FunctionCall, Message, ToolSpec, Usage
from tests.support.data_anthropic import (
    ANTHROPIC_MAX_TOKENS_TOOL,
    ANTHROPIC_RATE_LIMITED_MIDSTREAM,
    ANTHROPIC_REDACTED,
    ANTHROPIC_THINK_TOOLS,
    SIGNATURE,
    a_start,
    a_stop,
    a_text_block,
    a_thinking_block,
    a_tool_block,
    anthropic_events,
)
from tests.support.drive_adapter import served_outcome
from tests.support.env_corpus import CORPUS, corpus_errors, corpus_streams, requires_corpus
from tests.support.fake_provider_server import Reply, split_events


# ---- own fixtures ---------------------------------------------------------------------------
async def test_thinking_signature_text_and_parallel_calls(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS))
    assert out.text == "Checking both cities."
    assert out.thought_text("raw") == "The user wants weather for two cities."
    assert [k for k, _ in out.thoughts] == ["raw", "raw", "signature"]
    assert out.thought_text("signature") == SIGNATURE
    assert out.call_summary == [
        ("get_weather", {"city": "Paris"}, False),
        ("get_weather", {"city": "Tokyo", "units": ["c"]}, False),
    ]
    assert [c.id for c in out.calls] == ["toolu_01", "toolu_02"]
    # The signed thinking block travels with the message's first call, for replay.
    assert out.calls[0].provider_fields[THINKING_BLOCKS] == [
        {"type": "thinking", "thinking": "The user wants weather for two cities.", "signature": SIGNATURE}
    ]
    assert THINKING_BLOCKS not in out.calls[1].provider_fields
    assert out.calls[0].thought_signature == SIGNATURE
    assert (out.done.finish_reason, out.done.usage) == ("tool_calls", Usage(25, 88, None, None, 113))


async def test_each_call_is_its_own_chunk_in_order(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS))
    kinds = [c.type for c in out.chunks if c.type != "text"]
    assert kinds == ["function_call", "function_call", "done"]


async def test_redacted_thinking_is_recorded_never_decoded(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_REDACTED))
    assert out.text == "Hello there."
    assert out.thoughts == [("redacted", "")]
    assert "ENCRYPTED" not in repr(out.chunks)
    assert out.done.finish_reason == "stop"


async def test_midstream_error_event_classifies_like_http(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_RATE_LIMITED_MIDSTREAM))
    assert out.text == "Partial"
    assert (out.error.type, out.error.retryable) == ("rate_limit", True)
    http = await served_outcome(provider_server, "anthropic", Reply.error(429, {"type": "error", "error": {
        "type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"}}))
    assert (http.error.type, http.error.retryable) == (out.error.type, out.error.retryable)


async def test_max_tokens_inside_arguments_is_repaired_and_flagged(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_MAX_TOKENS_TOOL))
    assert out.call_summary == [("search", {"query": "rust async", "limit": 10}, True)]
    assert out.done.finish_reason == "length"


@pytest.mark.parametrize(("status", "error_type", "expected"), [
    (429, "rate_limit_error", ("rate_limit", True)),
    (529, "overloaded_error", ("provider_overloaded", True)),
    (500, "api_error", ("provider_overloaded", True)),
    (401, "authentication_error", ("api_error", False)),
    (403, "permission_error", ("api_error", False)),
    (400, "invalid_request_error", ("api_error", False)),
])
async def test_http_errors(provider_server, status, error_type, expected):
    body = {"type": "error", "error": {"type": error_type, "message": "fixture failure"}}
    out = await served_outcome(provider_server, "anthropic", Reply.error(status, body))
    assert (out.error.type, out.error.retryable, out.error.status) == (*expected, status)
    assert out.error.provider == "anthropic"
    assert len(provider_server.requests) == 1  # SDK retries are off


async def test_midstream_error_from_the_sdk_typed_path_matches(provider_server):
    """The SDK raises `event: error` as APIStatusError(status 200): branch on the body type."""
    body = Reply.named_sse(ANTHROPIC_RATE_LIMITED_MIDSTREAM)
    provider_server.reply(body)
    client = anthropic.AsyncAnthropic(base_url=provider_server.url, api_key="sk-ant-x", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as raised:
        async for _ in await client.messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}], stream=True
        ):
            pass
    await client.close()
    assert raised.value.status_code == 200
    adapter = create_adapter("anthropic", api_key="sk-ant-x", model="c", base_url=provider_server.url)
    error = adapter.handle_provider_error(raised.value)
    assert (error.type, error.retryable, error.status) == ("rate_limit", True, None)


# ---- the corpus ------------------------------------------------------------------------------
def _oracle(body: bytes) -> dict:
    """What a stream says, read with json.loads per event (an independent reading)."""
    text_blocks: list[str] = []
    thinking, calls, usage, stop = [], [], {}, None
    blocks: dict[int, dict] = {}
    for raw in split_events(body):
        data = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
        if not data:
            continue
        event = json.loads(data[0])
        kind = event["type"]
        if kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"], parts=[])
            if event["content_block"]["type"] == "text":
                text_blocks.append("")
        elif kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                text_blocks[-1] += delta["text"]
            elif delta["type"] == "thinking_delta":
                thinking.append(delta["thinking"])
            elif delta["type"] == "input_json_delta":
                blocks[event["index"]]["parts"].append(delta["partial_json"])
        elif kind == "content_block_stop":
            block = blocks[event["index"]]
            if block["type"] == "tool_use":
                calls.append((block["name"], json.loads("".join(block["parts"]) or "{}"), False))
        elif kind == "message_start":
            usage.update(event["message"]["usage"])
        elif kind == "message_delta":
            usage.update(event["usage"])
            stop = event["delta"]["stop_reason"]
    return {"text": "\n\n".join(t for t in text_blocks if t), "thinking": "".join(thinking),
            "calls": calls, "usage": usage, "stop": stop}


# The contract's finish reason for each native stop reason of the corpus.
STOP_REASONS = {"end_turn": "stop", "tool_use": "tool_calls"}

# name -> (text start, text end, thought kinds counted, calls, native stop reason, usage, error).
# Usage by hand from the stream: input = input + cache writes + cache reads of the last
# report that has them (message_delta may restate them), output = the last output_tokens.
ANTHROPIC_CORPUS = {
    "anthropic/midstream_overloaded_error": ("2", "2", {}, [], None, None, ("provider_overloaded", True)),
    "anthropic/redacted_thinking": ("I notice that you've sent", "legitimate task or question?",
                                    {"redacted": 2}, [], "end_turn", Usage(92, 189, None, 0, 281), None),
    "anthropic/text_short": ("2", "2", {}, [], "end_turn", Usage(20, 5, None, 0, 25), None),
    "anthropic/thinking_signature": ("Here are the basic steps for safely crossing the street",
                                     "when crossing streets.", {"raw": 13, "signature": 1}, [],
                                     "end_turn", Usage(43, 282, None, 0, 325), None),
    "anthropic/thinking_tool_use_mcp": ("**Pydantic-AI** is a framework", "provider-specific complexities.",
                                        {"raw": 5, "signature": 1}, [], "end_turn",
                                        Usage(3042, 354, None, 0, 3396), None),
    "anthropic/tool_use_input_json_delta": (
        "Let me search for a tool that can provide current exchange rate information.\n\nI ",
        "EUR exchange rate for you.", {},
        [("get_exchange_rate", {"from_currency": "USD", "to_currency": "EUR"}, False)], "tool_use",
        Usage(1591, 175, None, 0, 1766), None),
    "anthropic/tool_use_text_then_tool": ("I'll check the current weather in Paris for you.",
                                          "Paris for you.", {}, [("get_weather", {"location": "Paris"}, False)],
                                          "tool_use", Usage(377, 65, None, 0, 442), None),
}


@requires_corpus
def test_every_anthropic_corpus_stream_has_an_expectation():
    assert sorted(ANTHROPIC_CORPUS) == corpus_streams("anthropic")


@requires_corpus
@pytest.mark.parametrize("name", sorted(ANTHROPIC_CORPUS))
async def test_corpus_stream(provider_server, name):
    start, end, kinds, calls, finish, usage, error = ANTHROPIC_CORPUS[name]
    reply = Reply.from_corpus(CORPUS, name)
    out = await served_outcome(provider_server, "anthropic", reply)
    oracle = _oracle(reply.body)
    assert out.text == oracle["text"]
    assert out.text.startswith(start) and out.text.endswith(end)
    assert out.thought_text("raw") == oracle["thinking"]
    counted: dict[str, int] = {}
    for kind, _ in out.thoughts:
        counted[kind] = counted.get(kind, 0) + 1
    assert counted == kinds
    assert out.call_summary == calls == oracle["calls"]
    assert all(c.id and c.id.startswith("toolu_") for c in out.calls)
    if error is None:
        assert out.error is None
        assert finish == oracle["stop"]
        assert out.done.finish_reason == STOP_REASONS[finish]
        assert out.done.usage == usage
        assert (usage.input_tokens, usage.output_tokens) == (
            oracle["usage"]["input_tokens"], oracle["usage"]["output_tokens"])
    else:
        assert out.done is None
        assert (out.error.type, out.error.retryable) == error


ANTHROPIC_ERRORS = {
    "errors/anthropic_400_invalid_request_effort": ("api_error", False),
    "errors/anthropic_400_prompt_too_long": ("api_error", False),
    "errors/anthropic_404_not_found_model": ("model_error", False),
    "errors/anthropic_429_rate_limit_error": ("rate_limit", True),
    "errors/anthropic_529_overloaded_error": ("provider_overloaded", True),
}


@requires_corpus
def test_every_anthropic_error_body_has_an_expectation():
    assert sorted(ANTHROPIC_ERRORS) == corpus_errors("anthropic")


@requires_corpus
@pytest.mark.parametrize("name", sorted(ANTHROPIC_ERRORS))
async def test_corpus_error_body(provider_server, name):
    sidecar = json.loads((CORPUS / f"{name}.json").read_text())
    out = await served_outcome(provider_server, "anthropic", Reply.from_corpus(CORPUS, name))
    assert (out.error.type, out.error.retryable) == ANTHROPIC_ERRORS[name]
    assert out.error.status == sidecar["status"]
    assert out.error.message == sidecar["body"]["error"]["message"]
    assert out.text == "" and out.done is None
    assert len(provider_server.requests) == 1


# ---- the request the SDK sends ---------------------------------------------------------------
REPLAY = ChatRequest(
    system="You are terse.",
    messages=[
        Message("user", "Weather in Paris and Tokyo?"),
        Message("assistant", "Checking.", tool_calls=[
            FunctionCall("get_weather", {"city": "Paris"}, id="toolu_01", provider_fields={
                THINKING_BLOCKS: [{"type": "thinking", "thinking": "two cities", "signature": "sig=="},
                                  {"type": "redacted_thinking", "data": "opaque=="}]}),
            FunctionCall("get_weather", {"city": "Tokyo"}, id="toolu_02"),
        ]),
        Message("tool", '{"temp": 18}', tool_call_id="toolu_01", name="get_weather"),
        Message("tool", '{"temp": 9}', tool_call_id="toolu_02", name="get_weather"),
        Message("user", "Thanks."),
    ],
    tools=[ToolSpec("get_weather", "Current weather", {"type": "object", "properties": {
        "city": {"type": "string"}}, "required": ["city"]})],
    max_output_tokens=1000,
    thinking_budget=2000,
    temperature=0.3,
)


async def test_request_carries_history_tools_thinking_and_key(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_REDACTED), REPLAY)
    assert out.done is not None
    sent = provider_server.requests[-1]
    assert sent.path == "/v1/messages"
    assert sent.api_key == "sk-ant-test-key-0000"
    body = sent.json
    assert body["stream"] is True and body["model"] == "claude-test"
    assert body["system"] == "You are terse."
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert body["max_tokens"] > 2000  # the API requires max_tokens > budget_tokens
    assert "temperature" not in body  # extended thinking takes the default temperature
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"]
    assert assistant[0]["signature"] == "sig==" and assistant[1]["data"] == "opaque=="
    assert assistant[3] == {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
    results = body["messages"][2]["content"]
    assert [(b["type"], b.get("tool_use_id")) for b in results] == [
        ("tool_result", "toolu_01"), ("tool_result", "toolu_02"), ("text", None)]
    assert body["tools"][0]["input_schema"]["required"] == ["city"]


def test_default_max_tokens_and_effort_budget():
    plain = build_arguments(ChatRequest(messages=[Message("user", "x")], temperature=0.5), capabilities_of("anthropic", "claude-sonnet-4-5"))
    # No temperature, even one asked for: API version 2026-10-21 refuses it on every model.
    assert plain["max_tokens"] == 4096 and "extra_body" not in plain and "thinking" not in plain
    effort = build_arguments(ChatRequest(messages=[Message("user", "x")], reasoning_effort="high"), capabilities_of("anthropic", "m"))
    assert effort["thinking"]["budget_tokens"] < effort["max_tokens"]


# ---- timeouts and connections ----------------------------------------------------------------
async def test_no_response_within_timeout_is_a_retryable_timeout(provider_server):
    reply = Reply.named_sse(ANTHROPIC_REDACTED, first_byte_delay=1.5)
    out = await served_outcome(provider_server, "anthropic", reply, timeout=0.3)
    assert (out.error.type, out.error.retryable) == ("timeout", True)


async def test_stalled_stream_times_out(provider_server):
    reply = Reply.named_sse(ANTHROPIC_REDACTED, event_delay=0.4)
    out = await served_outcome(provider_server, "anthropic", reply, timeout=0.25)
    assert (out.error.type, out.error.retryable) == ("timeout", True)


async def test_refused_connection_is_not_retryable():
    adapter = create_adapter("anthropic", api_key="sk-ant-x", model="m", base_url="http://127.0.0.1:9", timeout=2)
    chunks = [c async for c in normalized_stream(adapter, ChatRequest(messages=[Message("user", "x")]))]
    assert [c.type for c in chunks] == ["error"]
    assert (chunks[0].error.type, chunks[0].error.retryable) == ("api_error", False)


def test_key_never_in_repr():
    adapter = create_adapter("anthropic", api_key="sk-ant-secret-123456", model="m")
    assert "secret" not in repr(adapter)


async def test_error_description_is_the_shared_localized_headline(provider_server):
    from providers.error_description import describe_error

    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    out = await served_outcome(provider_server, "anthropic", Reply.error(429, body))
    english, japanese = describe_error(out.error, "en"), describe_error(out.error, "ja")
    assert english and japanese and english != japanese


async def test_calls_round_trip_with_their_thinking_for_replay(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_THINK_TOOLS))
    history = [Message("user", "weather?"), Message("assistant", out.text, tool_calls=out.calls)]
    blocks = build_arguments(ChatRequest(messages=history), capabilities_of("anthropic", "m"))["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert blocks[0]["signature"] == SIGNATURE
    assert [b["id"] for b in blocks[2:]] == ["toolu_01", "toolu_02"]


async def test_interleaved_thinking_goes_with_the_call_it_preceded(provider_server):
    events = anthropic_events([
        a_thinking_block(0, ["first"], "sig-1"),
        a_tool_block(1, "toolu_a", "lookup", ['{"q": 1}']),
        a_thinking_block(2, ["second"], "sig-2"),
        a_tool_block(3, "toolu_b", "lookup", ['{"q": 2}']),
    ], "tool_use", 30)
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(events))
    assert [c.provider_fields[THINKING_BLOCKS][0]["thinking"] for c in out.calls] == ["first", "second"]
    assert [c.thought_signature for c in out.calls] == ["sig-1", "sig-2"]
    history = [Message("user", "q"), Message("assistant", "", tool_calls=out.calls)]
    blocks = build_arguments(ChatRequest(messages=history), capabilities_of("anthropic", "m"))["messages"][1]["content"]
    assert [(b["type"], b.get("signature") or b.get("id")) for b in blocks] == [
        ("thinking", "sig-1"), ("tool_use", "toolu_a"), ("thinking", "sig-2"), ("tool_use", "toolu_b")]


async def test_refusal_stop_reason_is_content_blocked_after_the_text(provider_server):
    events = anthropic_events([a_text_block(0, ["I can", " help with"])], "refusal", 6)
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(events))
    assert out.text == "I can help with"
    assert (out.error.type, out.error.retryable, out.error.code) == ("content_blocked", False, "refusal")


async def test_tool_input_given_whole_at_block_start_is_kept(provider_server):
    events = anthropic_events([[
        a_start(0, {"type": "tool_use", "id": "toolu_w", "name": "now", "input": {"tz": "UTC"}}), a_stop(0),
    ]], "tool_use", 3)
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(events))
    assert out.call_summary == [("now", {"tz": "UTC"}, False)]
