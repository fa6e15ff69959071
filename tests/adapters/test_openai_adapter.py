"""The chat-completions adapter through the real openai SDK and the local replay server,
on the suite's own fixtures (OpenAI itself speaks the Responses API:
test_openai_responses_*.py; OpenRouter stands in here for any hosted chat-completions
provider)."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx2
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
from providers.endpoint_check import EndpointPolicy
from providers.error_description import describe_error
from providers.openai_compat.adapter import OpenAICompatAdapter
from providers.openai_compat.request import DEFAULT_BASE_URLS
from providers.types import ProviderError, RawStreamChunk, Usage
from tests.support import data_openai as fx
from tests.support.data_openai import TOOLS
from tests.support.drive_adapter import HELLO, served_outcome, summarize
from tests.support.fake_provider_server import Reply

# The replay server and the refused port are on loopback, which a custom endpoint may
# reach only when the operator allows private endpoints.
LOOPBACK_ALLOWED = EndpointPolicy(allow_private=True)
CHAT = "openrouter"


async def test_text_usage_and_done(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    out = await served_outcome(provider_server, CHAT)
    assert out.text == "Hello!"
    assert out.error is None
    assert out.last.type == "done"
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(9, 2, None, None, 11))
    assert [c.type for c in out.chunks] == ["text", "text", "done"]


async def test_request_shape(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    request = ChatRequest(
        messages=[Message("user", "time?"),
                  Message("assistant", "", tool_calls=[FunctionCall("get_time", {"tz": "UTC"}, id="c1")]),
                  Message("tool", '{"time": "12:00"}', tool_call_id="c1", name="get_time"),
                  Message("user", "thanks")],
        system="Be brief.", tools=TOOLS, max_output_tokens=64, temperature=0.2, reasoning_effort="low",
    )
    # OpenRouter's reasoning object (test_request_reasoning.py has every provider's form).
    await served_outcome(provider_server, CHAT, request=request, api_key="sk-request-shape", model="openai/o4-mini")
    sent = provider_server.requests[-1]
    assert sent.path == "/v1/chat/completions"
    assert sent.api_key == "sk-request-shape"
    assert sent.headers.get("x-stainless-retry-count") == "0"
    body = sent.json
    assert body["model"] == "openai/o4-mini"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 64
    assert body["temperature"] == 0.2  # OpenRouter's model list said nothing against it
    assert body["reasoning"] == {"effort": "low"}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "time?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": '{"tz": "UTC"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"time": "12:00"}'},
        {"role": "user", "content": "thanks"},
    ]
    assert body["tools"][0] == {"type": "function", "function": {
        "name": "get_time", "description": "Current time", "parameters": dict(TOOLS[0].parameters)}}


async def test_replay_fields_per_provider(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    details = [{"type": "reasoning.text", "text": "x", "signature": "s", "index": 0}]
    call = FunctionCall("get_time", {}, id="c9",
                        provider_fields={"reasoning_details": details, "reasoning_content": "thought"})
    request = ChatRequest(messages=[Message("user", "q"), Message("assistant", "", tool_calls=[call]),
                                    Message("tool", "ok", tool_call_id="c9")],
                          max_output_tokens=10, reasoning_effort="high")
    sent = {}
    models = {"openrouter": "m-test", "deepseek": "deepseek-reasoner", "zai": "glm-4.6"}
    for provider, model in models.items():
        await served_outcome(provider_server, provider, request=request, model=model)
        sent[provider] = provider_server.requests[-1].json
    assert sent["openrouter"]["messages"][1]["reasoning_details"] == details
    assert "reasoning_content" not in sent["openrouter"]["messages"][1]
    assert sent["openrouter"]["reasoning"] == {"effort": "high"}
    assert sent["openrouter"]["max_completion_tokens"] == 10  # `max_tokens` is deprecated there
    for provider in ("deepseek", "zai"):
        assert sent[provider]["messages"][1]["reasoning_content"] == "thought"
        assert "reasoning_details" not in sent[provider]["messages"][1]
    assert sent["zai"]["thinking"] == {"type": "enabled"}


async def test_reasoning_content_is_a_thought(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.REASONING_CONTENT)))
    out = await served_outcome(provider_server, "deepseek")
    assert out.text == "Hi there!"
    assert out.raw_thoughts == "The user greets. Reply kindly."
    assert out.done.usage == Usage(input_tokens=5, output_tokens=12, reasoning_tokens=8,
                                   cached_input_tokens=3, total_tokens=17)
    assert all(t.provider == "deepseek" for c in out.chunks for t in c.thoughts or ())


async def test_think_tags_split_across_chunks(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.THINK_TAGS_SPLIT)))
    out = await served_outcome(provider_server, "custom")
    assert out.text == "The answer is 42."
    assert out.raw_thoughts == "weighing options"
    assert "<" not in out.text


async def test_parallel_tool_calls_each_its_own_chunk_in_index_order(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.PARALLEL_TOOL_CALLS)))
    out = await served_outcome(provider_server, CHAT)
    assert [(c.name, c.args, c.id, c.arguments_truncated) for c in out.calls] == [
        ("get_weather", {"city": "Paris"}, "call_a", False),
        ("get_time", {"tz": "UTC"}, "call_b", False),
    ]
    assert [c.type for c in out.chunks] == ["function_call", "function_call", "done"]
    assert (out.done.finish_reason, out.done.usage) == ("tool_calls", Usage(20, 30, None, None, 50))


async def test_truncated_arguments_are_repaired_and_flagged(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TRUNCATED_ARGUMENTS)))
    out = await served_outcome(provider_server, CHAT)
    assert len(out.calls) == 1
    call = out.calls[0]
    assert (call.name, call.args, call.arguments_truncated) == ("search", {"q": "cats"}, True)
    assert (out.done.finish_reason, out.done.usage) == ("length", None)


async def test_midstream_error_keeps_text_and_is_classified(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.MIDSTREAM_ERROR, done=False)))
    out = await served_outcome(provider_server, CHAT)
    assert out.text == "Partial"
    assert out.last.type == "error"
    assert (out.error.type, out.error.retryable) == ("provider_overloaded", True)
    assert out.error.provider == CHAT


async def test_openrouter_serving_provider_details_and_keepalives(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.OPENROUTER_REASONING_TOOL,
                                                 comments=fx.OPENROUTER_COMMENTS)))
    out = await served_outcome(provider_server, "openrouter")
    assert out.serving == {"Anthropic"}
    assert all(c.serving_provider == "Anthropic" for c in out.chunks)
    assert out.raw_thoughts == "Need the weather."
    assert out.text == "Checking."
    assert len(out.calls) == 1
    assert out.calls[0].args == {"city": "Oslo"}
    assert out.calls[0].provider_fields == {"reasoning_details": [
        {"type": "reasoning.text", "text": "Need the weather.", "signature": "sig-1", "index": 0,
         "format": "anthropic-claude-v1"}]}
    assert (out.done.finish_reason, out.done.usage) == ("tool_calls", Usage(3, 4, None, None, 7))
    assert out.done.serving_provider == "Anthropic"


async def test_openrouter_encrypted_reasoning_is_redacted(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.OPENROUTER_ENCRYPTED)))
    out = await served_outcome(provider_server, "openrouter")
    assert out.redacted == 1
    assert out.raw_thoughts == ""
    assert out.text == "Done."


async def test_openrouter_finish_reason_error(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.OPENROUTER_FINISH_ERROR)))
    out = await served_outcome(provider_server, "openrouter")
    assert out.text == "Hello"
    assert (out.error.type, out.error.retryable, out.error.code) == ("provider_overloaded", True, "502")
    assert out.last.serving_provider == "OpenAI"


async def test_content_in_an_error_chunk_is_delivered_first(provider_server):
    body = [fx.chunk({"content": "Hi "}, provider="Minimax"),
            fx.chunk({"content": "there"}, "error", error={"code": 429, "message": "Rate limited upstream"})]
    provider_server.reply(Reply(body=fx.sse_body(body, done=False)))
    out = await served_outcome(provider_server, "openrouter")
    assert out.text == "Hi there"
    assert (out.error.type, out.error.retryable, out.error.status) == ("rate_limit", True, 429)
    assert out.last.serving_provider == "Minimax"


async def test_deepseek_reasoning_replayed_on_the_call(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.DEEPSEEK_TOOL_CALL)))
    out = await served_outcome(provider_server, "deepseek")
    assert out.calls[0].provider_fields == {"reasoning_content": "Weather needs a tool."}
    assert out.raw_thoughts == "Weather needs a tool."


async def test_spill_guard_moves_glued_reasoning_tail(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.SPILL)))
    out = await served_outcome(provider_server, "zai")
    assert out.text == "Sure thing, here it is."
    assert out.raw_thoughts == "Think brieflylet me see."


async def test_verbatim_tool_call_on_custom(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.VERBATIM)))
    request = ChatRequest(messages=[Message("user", "time?")], tools=TOOLS)
    out = await served_outcome(provider_server, "custom", request=request, verbatim_tool_calling=True)
    shape = [(c.type, c.content, c.function_call and (c.function_call.name, c.function_call.args))
             for c in out.chunks]
    # Prose first, then the call (its closing backtick dropped), then what followed it.
    assert shape == [("text", "Sure. ", None), ("function_call", None, ("get_time", {"tz": "UTC"})),
                     ("text", " done", None), ("done", None, None)]
    assert out.calls[0].id


@pytest.mark.parametrize("provider,options", [("custom", {}), (CHAT, {"verbatim_tool_calling": True})])
async def test_verbatim_off_leaves_text(provider_server, provider, options):
    provider_server.reply(Reply(body=fx.sse_body(fx.VERBATIM)))
    out = await served_outcome(provider_server, provider, request=ChatRequest([Message("user", "t")], tools=TOOLS),
                               **options)
    assert out.calls == []
    assert out.text == 'Sure. `get_time({"tz": "UTC"})` done'


HTTP_ERRORS = [
    (429, {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
     "rate_limit", True),
    (429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                     "code": "insufficient_quota"}}, "api_error", False),
    (404, {"error": {"message": "The model `m-test` does not exist", "code": "model_not_found"}},
     "model_error", False),
    (402, {"error": {"message": "Insufficient Balance", "type": "unknown_error"}}, "api_error", False),
    (500, {"error": {"message": "boom", "type": "server_error"}}, "provider_overloaded", True),
    (503, "<html>Service Unavailable</html>", "provider_overloaded", True),
    (401, {"error": {"message": "Incorrect API key provided: sk-abcdefghijklmnopqrst", "code": "invalid_api_key"}},
     "api_error", False),
]


@pytest.mark.parametrize("status,body,kind,retryable", HTTP_ERRORS)
async def test_http_errors(provider_server, status, body, kind, retryable):
    provider_server.reply(Reply.error(status, body))
    out = await served_outcome(provider_server)
    assert [c.type for c in out.chunks] == ["error"]
    assert (out.error.type, out.error.retryable, out.error.status) == (kind, retryable, status)
    assert "abcdefghijklmnopqrst" not in out.error.message
    assert len(provider_server.requests) == 1  # SDK retries are off


async def test_timeout_waiting_for_the_response(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT), first_byte_delay=0.6))
    out = await served_outcome(provider_server, timeout=0.1)
    assert [c.type for c in out.chunks] == ["error"]
    assert (out.error.type, out.error.retryable) == ("timeout", True)


async def test_timeout_waiting_for_events(provider_server):
    # Headers arrive at once; the events do not.
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT), event_delay=0.6))
    out = await served_outcome(provider_server, timeout=0.1)
    assert [c.type for c in out.chunks] == ["error"]
    assert (out.error.type, out.error.retryable) == ("timeout", True)
    assert "no data" in out.error.message


async def test_refused_connection():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    adapter = create_adapter("custom", api_key="k", model="m", base_url=f"http://127.0.0.1:{port}/v1",
                             timeout=2.0, endpoint_policy=LOOPBACK_ALLOWED)
    chunks = [c async for c in normalized_stream(adapter, HELLO)]
    await adapter.aclose()
    assert [c.type for c in chunks] == ["error"]
    assert (chunks[0].error.type, chunks[0].error.retryable) == ("api_error", False)


async def test_body_ending_without_finish_is_a_retryable_error(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT[:3], done=False)))
    out = await served_outcome(provider_server, CHAT)
    assert out.text == "Hello!"
    assert (out.error.type, out.error.retryable) == ("provider_overloaded", True)


async def test_cut_connection_is_a_retryable_error(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.PARALLEL_TOOL_CALLS), cut_after_events=2))
    out = await served_outcome(provider_server, CHAT)
    assert out.calls == []
    assert out.last.type == "error" and out.error.retryable


async def test_concurrent_streams_on_one_adapter_keep_their_own_state(provider_server):
    """Per-stream state lives in what start_stream makes: two interleaved streams, one adapter."""
    provider_server.reply(Reply(body=fx.sse_body(fx.THINK_TAGS_SPLIT), event_delay=0.01), key="sk-a")
    provider_server.reply(Reply(body=fx.sse_body(fx.PARALLEL_TOOL_CALLS), event_delay=0.01), key="sk-b")
    adapter_a = create_adapter("custom", api_key="sk-a", model="m", base_url=f"{provider_server.url}/v1",
                               endpoint_policy=LOOPBACK_ALLOWED)
    adapter_b = create_adapter("custom", api_key="sk-b", model="m", base_url=f"{provider_server.url}/v1",
                               endpoint_policy=LOOPBACK_ALLOWED)

    async def collect(adapter):
        return summarize([c async for c in normalized_stream(adapter, HELLO)])

    # The same adapter object streams twice at once, next to another adapter's stream.
    a1, a2, b = await asyncio.gather(collect(adapter_a), collect(adapter_a), collect(adapter_b))
    await adapter_a.aclose()
    await adapter_b.aclose()
    for out in (a1, a2):
        assert (out.text, out.raw_thoughts, out.calls) == ("The answer is 42.", "weighing options", [])
    assert [c.name for c in b.calls] == ["get_weather", "get_time"]
    assert b.text == ""


def test_create_and_base_urls():
    adapter = create_adapter("zai", api_key="sk-secret-value-1234567", model="glm")
    assert isinstance(adapter, OpenAICompatAdapter)
    assert adapter.base_url == DEFAULT_BASE_URLS["zai"] == "https://api.z.ai/api/paas/v4"
    assert "sk-secret" not in repr(adapter)
    assert create_adapter("deepseek", api_key="k", model="m").base_url == "https://api.deepseek.com"
    assert create_adapter("openrouter", api_key="k", model="m").base_url == "https://openrouter.ai/api/v1"
    assert create_adapter("openai", api_key="k", model="m").base_url == "https://api.openai.com/v1"
    with pytest.raises(ValueError, match="base_url"):
        create_adapter("custom", api_key="k", model="m")


def test_process_chunk_needs_stream_state():
    adapter = create_adapter("openai", api_key="k", model="m")
    with pytest.raises(ValueError, match="start_stream"):
        adapter.process_chunk(RawStreamChunk((None, b"{}"), "openai"))


def test_handle_provider_error_maps_unknown_exceptions():
    adapter = create_adapter("openai", api_key="k", model="m")
    err = adapter.handle_provider_error(RuntimeError("surprise"))
    assert isinstance(err, ProviderError)
    assert (err.type, err.retryable) == ("api_error", False)


def _sdk_exceptions():
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    timeout = openai.APITimeoutError(request=request)
    reset = openai.APIConnectionError(request=request)
    reset.__cause__ = httpx2.RemoteProtocolError("peer closed connection without sending complete body")
    refused = openai.APIConnectionError(request=request)
    refused.__cause__ = httpx2.ConnectError("All connection attempts failed")
    midstream = openai.APIError("Rate limit reached", request,
                                body={"message": "Rate limit reached", "type": "tokens", "code": "rate_limit_exceeded"})
    overload = openai.APIError("Overloaded", request, body={"message": "Overloaded", "type": "server_error"})
    return [
        (timeout, "timeout", True),
        (reset, "provider_overloaded", True),
        (refused, "api_error", False),
        (midstream, "rate_limit", True),
        (overload, "provider_overloaded", True),
        (httpx2.ReadTimeout("read"), "timeout", True),
    ]


@pytest.mark.parametrize("exc,kind,retryable", _sdk_exceptions())
def test_handle_provider_error_sdk_classes(exc, kind, retryable):
    adapter = create_adapter("openai", api_key="k", model="m")
    err = adapter.handle_provider_error(exc)
    assert (err.type, err.retryable, err.provider) == (kind, retryable, "openai")
    assert err.original_error is exc


def test_the_error_headline_is_localized():
    err = ProviderError("rate_limit", "slow down", True, "429", status=429, provider="openrouter")
    english, japanese = describe_error(err, "en"), describe_error(err, "ja")
    assert english and japanese and english != japanese


async def test_tool_spec_schema_serializes(provider_server):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    spec = ToolSpec("roll", "Dice", {"type": "object", "properties": {"sides": {"type": "integer"}}})
    await served_outcome(provider_server, "custom", request=ChatRequest([Message("user", "roll")], tools=(spec,)))
    assert json.dumps(provider_server.requests[-1].json["tools"])


@pytest.mark.parametrize("how", ["end_of_body", "transport_reset", "error_event"])
async def test_held_text_is_released_when_the_stream_fails(provider_server, how):
    """Nothing visible is lost: text the spill guard was still judging is shown
    even when the stream ends in an error, before the error chunk."""
    events = [fx.chunk({"reasoning_content": "thinking hard"}),
              fx.chunk({"content": "sure, here is the plan without a boundary yet"})]
    if how == "error_event":
        events.append({"error": {"message": "upstream failed", "type": "server_error", "code": 502}})
    body = fx.sse_body(events, done=False)
    reply = Reply(body=body)
    if how == "transport_reset":  # the connection drops in the middle of the next event
        reply = Reply(body=body + b'data: {"choices": [', cut_after_bytes=len(body) + 10)
    provider_server.reply(reply)
    out = await served_outcome(provider_server, "deepseek")
    assert out.text == "sure, here is the plan without a boundary yet"
    assert out.error is not None and out.error.retryable
    assert out.last.type == "error"
