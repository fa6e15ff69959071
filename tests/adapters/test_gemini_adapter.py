"""The Gemini adapter through the replay server and the real google-genai SDK.

Own fixtures, every gemini corpus stream and every gemini error body, the request the
SDK sends, timeouts, connection failures and mid-stream error payloads.
"""

from __future__ import annotations

import json

import pytest
from google.genai import errors as genai_errors

from providers.adapter import create_adapter, normalized_stream
from providers.capabilities import capabilities_of
from providers.gemini.events import THOUGHT_KIND
from providers.gemini.request import build_body
from providers.types import ChatRequest, FunctionCall, Message, ToolSpec, Usage
from tests.support.data_gemini import (
    GEMINI_MALFORMED_CALL,
    GEMINI_MIDSTREAM_ERROR_BARE,
    GEMINI_MIDSTREAM_ERROR_DATA,
    GEMINI_PARALLEL_CALLS,
    GEMINI_PROMPT_BLOCKED,
    GEMINI_SAFETY_AFTER_TEXT,
    GEMINI_SIG_A,
    GEMINI_SIG_B,
    GEMINI_THINK_TEXT,
    GEMINI_UNSPECIFIED_BLOCK_IS_NOT_A_BLOCK,
)
from tests.support.drive_adapter import served_outcome
from tests.support.env_corpus import CORPUS, corpus_errors, corpus_streams, requires_corpus
from tests.support.fake_provider_server import Reply, split_events


def test_gemini_thought_text_is_logged_as_summary():
    # With includeThoughts the API returns thought summaries, never raw reasoning.
    assert THOUGHT_KIND == "raw"


# ---- own fixtures ---------------------------------------------------------------------------
async def test_thought_summary_signature_text_usage(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT))
    assert out.text == "The sky is blue."
    assert out.thoughts == [("raw", "**Planning**\n\nThink about colors."), ("signature", GEMINI_SIG_A)]
    # Output = candidates + thoughts: Gemini bills thinking as output but counts it apart.
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(9, 26, 21, None, 35))


async def test_parallel_calls_each_a_chunk_with_signature(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_PARALLEL_CALLS))
    assert out.call_summary == [
        ("get_weather", {"city": "Paris"}, False),
        ("get_time", {"tz": "Asia/Tokyo", "format": {"h24": True}}, False),
    ]
    assert [c.thought_signature for c in out.calls] == [GEMINI_SIG_B, None]
    assert [c.type for c in out.chunks] == ["text", "function_call", "function_call", "done"]
    assert out.thoughts == [("raw", "Let me look.")]
    # Gemini says STOP after function calls; the contract says the tools must run.
    assert (out.done.finish_reason, out.done.usage) == ("tool_calls", Usage(40, 12, None, None, 52))


async def test_safety_finish_is_blocked_after_the_same_chunks_text(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_SAFETY_AFTER_TEXT))
    assert out.text == "Here is a start"
    assert [c.type for c in out.chunks] == ["text", "text", "error"]
    assert (out.error.type, out.error.retryable, out.error.code) == ("content_blocked", False, "SAFETY")


async def test_prompt_block_reason(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_PROMPT_BLOCKED))
    assert (out.error.type, out.error.retryable, out.error.code) == ("content_blocked", False, "BLOCKLIST")


async def test_unspecified_block_reason_is_not_a_block(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_UNSPECIFIED_BLOCK_IS_NOT_A_BLOCK))
    assert out.error is None and out.text == "fine" and out.done.finish_reason == "stop"


async def test_malformed_function_call_finish_is_not_an_error(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_MALFORMED_CALL))
    assert out.error is None and out.done.finish_reason == "other"


async def test_midstream_error_payload_classifies_like_http(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_MIDSTREAM_ERROR_DATA))
    assert out.text == "Part"
    assert (out.error.type, out.error.retryable, out.error.status) == ("provider_overloaded", True, 503)
    body = {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                      "status": "UNAVAILABLE"}}
    http = await served_outcome(provider_server, "google", Reply.error(503, body))
    assert (http.error.type, http.error.retryable, http.error.status) == ("provider_overloaded", True, 503)


async def test_midstream_error_as_bare_json_lines(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_MIDSTREAM_ERROR_BARE))
    assert out.text == "Part"
    assert (out.error.type, out.error.retryable, out.error.status) == ("rate_limit", True, 429)


@pytest.mark.parametrize(("status", "rpc_status", "message", "expected"), [
    (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", ("rate_limit", True)),
    (500, "INTERNAL", "An internal error has occurred.", ("provider_overloaded", True)),
    (504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.", ("timeout", True)),
    (400, "INVALID_ARGUMENT", "Request contains an invalid argument.", ("api_error", False)),
    (403, "PERMISSION_DENIED", "Permission denied.", ("api_error", False)),
])
async def test_http_errors(provider_server, status, rpc_status, message, expected):
    body = {"error": {"code": status, "message": message, "status": rpc_status}}
    out = await served_outcome(provider_server, "google", Reply.error(status, body))
    assert (out.error.type, out.error.retryable, out.error.status) == (*expected, status)
    assert isinstance(out.error.original_error, genai_errors.APIError)
    assert len(provider_server.requests) == 1  # SDK retries are off


# ---- the corpus ------------------------------------------------------------------------------
def _payloads(body: bytes) -> list[dict]:
    out = []
    for raw in split_events(body):
        for line in raw.decode().splitlines():
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))
    return out


def _oracle(body: bytes) -> dict:
    """What a stream says, read with json.loads per payload (an independent reading)."""
    text, thoughts, calls, finish, usage = "", "", [], None, {}
    for payload in _payloads(body):
        usage = payload.get("usageMetadata", usage)
        for candidate in payload.get("candidates", [])[:1]:
            for part in candidate.get("content", {}).get("parts", []):
                if "functionCall" in part:
                    calls.append((part["functionCall"]["name"], part["functionCall"].get("args", {}), False))
                elif part.get("thought"):
                    thoughts += part.get("text", "")
                else:
                    text += part.get("text", "")
            finish = candidate.get("finishReason", finish)
    return {"text": text, "thoughts": thoughts, "calls": calls, "finish": finish, "usage": usage}


BLOCKED = ("content_blocked", False)
# name -> (text, summary parts, signature entries, calls, finish, usage, error + code).
# Usage by hand from the last usageMetadata: output = candidates + thoughts.
GEMINI_CORPUS = {
    "gemini/finish_safety_empty_content": ("", 0, 0, [], None, None, (*BLOCKED, "SAFETY")),
    "gemini/finish_safety_vertex": ("<redacted>", 0, 0, [], None, None, (*BLOCKED, "SAFETY")),
    "gemini/finish_safety_with_text": ("No", 0, 0, [], None, None, (*BLOCKED, "SAFETY")),
    "gemini/function_call_basic": ("", 0, 0, [("get_capital", {"country": "France"}, False)], "tool_calls",
                                   Usage(52, 5, None, None, 57), None),
    "gemini/function_call_gemini_pro": ("", 0, 0, [("getTemperature", {"city": "San Jose"}, False)],
                                        "tool_calls", None, None),
    "gemini/function_call_thought_signature": ("", 0, 0, [("get_country", {}, False)], "tool_calls",
                                               Usage(29, 212, 202, None, 241), None),
    "gemini/max_tokens_text": ("The capital of France is", 0, 0, [], "length", Usage(15, 5, None, None, 20), None),
    "gemini/max_tokens_thinking_no_parts": ("", 0, 0, [], "length", Usage(15, 2, 2, None, 17), None),
    "gemini/prompt_blocked_other": ("", 0, 0, [], None, None, (*BLOCKED, "OTHER")),
    "gemini/prompt_blocked_prohibited_content": ("", 0, 0, [], None, None, (*BLOCKED, "PROHIBITED_CONTENT")),
    "gemini/prompt_blocked_safety": ("", 0, 0, [], None, None, (*BLOCKED, "SAFETY")),
    "gemini/recitation_after_text": ("Copyrighted text goes hereMore copyrighted text", 0, 0, [], None, None,
                                     (*BLOCKED, "RECITATION")),
    "gemini/recitation_no_content": ("text1text2text3text4text5text6text7text8", 0, 0, [], None, None,
                                     (*BLOCKED, "RECITATION")),
    "gemini/text_basic": ("The capital of France is Paris.\n", 0, 0, [], "stop",
                          Usage(13, 8, None, None, 21), None),
    "gemini/text_basic_short_2_0": ("The capital of Wyoming is **Cheyenne**.\n", 0, 0, [], "stop",
                                    Usage(7, 10, None, None, 17), None),
    "gemini/thinking_function_call_signature": ("", 2, 0, [("now", {}, False)], "tool_calls",
                                                Usage(38, 174, 168, None, 212), None),
    "gemini/thinking_reply_thought_summary": (None, 3, 0, [], "stop", Usage(10, 588, 540, None, 598), None),
    "gemini/thinking_thought_parts": (None, 4, 1, [], "stop", Usage(34, 1256, 787, None, 1290), None),
}
# The contract's finish reason for each native finish reason of the corpus streams that end cleanly.
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}


@requires_corpus
def test_every_gemini_corpus_stream_has_an_expectation():
    assert sorted(GEMINI_CORPUS) == corpus_streams("gemini")


@requires_corpus
@pytest.mark.parametrize("name", sorted(GEMINI_CORPUS))
async def test_corpus_stream(provider_server, name):
    text, summaries, signatures, calls, finish, usage, error = GEMINI_CORPUS[name]
    reply = Reply.from_corpus(CORPUS, name)
    out = await served_outcome(provider_server, "google", reply)
    oracle = _oracle(reply.body)
    assert out.text == oracle["text"]
    if text is not None:
        assert out.text == text
    assert out.thought_text("raw") == oracle["thoughts"]
    assert [k for k, _ in out.thoughts].count("raw") == summaries
    assert [k for k, _ in out.thoughts].count("signature") == signatures
    assert out.call_summary == calls == oracle["calls"]
    if error is None:
        assert out.error is None
        native = FINISH_REASONS[oracle["finish"]]
        assert out.done.finish_reason == finish == ("tool_calls" if calls and native == "stop" else native)
        assert out.done.usage == usage
        assert (usage and usage.total_tokens) == oracle["usage"].get("totalTokenCount")
    else:
        assert out.done is None
        assert (out.error.type, out.error.retryable, out.error.code) == error


@requires_corpus
async def test_corpus_call_signatures_are_kept_as_base64(provider_server):
    for name in ("gemini/function_call_thought_signature", "gemini/thinking_function_call_signature"):
        reply = Reply.from_corpus(CORPUS, name)
        out = await served_outcome(provider_server, "google", reply)
        wire = [p["thoughtSignature"] for payload in _payloads(reply.body)
                for p in payload["candidates"][0]["content"]["parts"] if "functionCall" in p]
        assert [c.thought_signature for c in out.calls] == wire and wire[0]


GEMINI_ERRORS = {
    "errors/gemini_400_api_key_invalid": ("api_error", False),
    "errors/gemini_400_invalid_argument": ("api_error", False),
    "errors/gemini_403_api_not_enabled": ("api_error", False),
    "errors/gemini_404_model_not_found": ("model_error", False),
    "errors/gemini_404_model_not_found_v1": ("model_error", False),
    # A billing-worded quota 429 with nothing structured is an exhausted balance (not worth
    # the same key again); with a per-minute QuotaFailure and a RetryInfo it is a rate limit.
    "errors/gemini_429_resource_exhausted_help_only": ("api_error", False),
    "errors/gemini_429_resource_exhausted_quota_retryinfo": ("rate_limit", True),
    "errors/gemini_503_unavailable_high_demand": ("provider_overloaded", True),
    "errors/gemini_503_unavailable_overloaded": ("provider_overloaded", True),
}


@requires_corpus
def test_every_gemini_error_body_has_an_expectation():
    assert sorted(GEMINI_ERRORS) == corpus_errors("gemini")


@requires_corpus
@pytest.mark.parametrize("name", sorted(GEMINI_ERRORS))
async def test_corpus_error_body(provider_server, name):
    sidecar = json.loads((CORPUS / f"{name}.json").read_text())
    out = await served_outcome(provider_server, "google", Reply.from_corpus(CORPUS, name))
    assert (out.error.type, out.error.retryable) == GEMINI_ERRORS[name]
    assert out.error.status == sidecar["status"]
    assert out.error.message == sidecar["body"]["error"]["message"]
    assert out.text == "" and out.done is None
    if out.error.type == "model_error":
        assert out.error.details is not None
    assert len(provider_server.requests) == 1


@requires_corpus
@pytest.mark.parametrize("name", sorted(GEMINI_ERRORS))
async def test_corpus_error_body_mid_stream_classifies_the_same(provider_server, name):
    """The same body inside a 200 stream gives the same type and retryable."""
    sidecar = json.loads((CORPUS / f"{name}.json").read_text())
    body = b'data: {"candidates":[{"content":{"parts":[{"text":"x"}]}}]}\r\n\r\n'
    body += b"data: " + json.dumps(sidecar["body"]).encode() + b"\r\n\r\n"
    out = await served_outcome(provider_server, "google", Reply(body=body))
    assert (out.error.type, out.error.retryable) == GEMINI_ERRORS[name]
    assert out.text == "x"


# ---- the request the SDK sends ---------------------------------------------------------------
REPLAY = ChatRequest(
    system="Be brief.",
    messages=[
        Message("user", "Weather in Paris and the time in Tokyo?"),
        Message("assistant", "", tool_calls=[
            FunctionCall("get_weather", {"city": "Paris"}, thought_signature=GEMINI_SIG_B),
            FunctionCall("get_time", {"tz": "Asia/Tokyo"}, id="call-7"),
        ]),
        Message("tool", '{"temp": 18}', name="get_weather"),
        Message("tool", "10:42", tool_call_id="call-7"),
        Message("user", "Thanks!"),
    ],
    tools=[ToolSpec("get_weather", "Current weather", {"type": "object", "properties": {
        "city": {"type": "string"}}, "required": ["city"], "additionalProperties": False})],
    max_output_tokens=800,
    reasoning_effort="low",
    temperature=0.2,
)


async def test_request_carries_history_tools_thinking_and_key(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT), REPLAY)
    assert out.done is not None
    sent = provider_server.requests[-1]
    assert sent.path == "/v1beta/models/gemini-test:streamGenerateContent"
    assert sent.query == {"alt": "sse"}
    assert sent.api_key == "AIza-test-key-0000"
    body = sent.json
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    model_parts = body["contents"][1]["parts"]
    assert model_parts == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": GEMINI_SIG_B},
        {"functionCall": {"name": "get_time", "args": {"tz": "Asia/Tokyo"}, "id": "call-7"}},
    ]
    answers = body["contents"][2]["parts"]
    assert answers[0] == {"functionResponse": {"name": "get_weather", "response": {"temp": 18}}}
    assert answers[1] == {"functionResponse": {"name": "get_time", "response": {"result": "10:42"},
                                               "id": "call-7"}}
    assert answers[2] == {"text": "Thanks!"}
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get_weather"
    assert declaration["parametersJsonSchema"]["additionalProperties"] is False
    # "gemini-test" names no version, so it is read as the newest generation: a thinking
    # level (Gemini 3 and later), the effort's own word.
    assert body["generationConfig"] == {"maxOutputTokens": 800, "temperature": 0.2,
                                        "thinkingConfig": {"thinkingLevel": "low", "includeThoughts": True}}


def test_no_thinking_config_unless_asked():
    body = build_body(ChatRequest(messages=[Message("user", "x")]), capabilities_of("google", "gemini-2.5-flash"))
    assert body == {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    off = build_body(ChatRequest(messages=[Message("user", "x")], thinking_budget=0), capabilities_of("google", "gemini-2.5-flash"))
    assert off["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0, "includeThoughts": False}


async def test_v1_route_works_too(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT), api_version="v1")
    assert out.text == "The sky is blue."
    assert provider_server.requests[-1].path == "/v1/models/gemini-test:streamGenerateContent"


# ---- timeouts and connections ----------------------------------------------------------------
async def test_no_response_within_timeout_is_a_retryable_timeout(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT, first_byte_delay=1.5),
                           timeout=0.3)
    assert (out.error.type, out.error.retryable) == ("timeout", True)


async def test_stalled_stream_times_out(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT, event_delay=0.4),
                           timeout=0.25)
    assert (out.error.type, out.error.retryable) == ("timeout", True)


async def test_refused_connection_is_not_retryable():
    adapter = create_adapter("google", api_key="AIza-x", model="m", base_url="http://127.0.0.1:9", timeout=2)
    try:
        chunks = [c async for c in normalized_stream(adapter, ChatRequest(messages=[Message("user", "x")]))]
    finally:
        await adapter.aclose()
    assert [c.type for c in chunks] == ["error"]
    assert (chunks[0].error.type, chunks[0].error.retryable) == ("api_error", False)


def test_key_never_in_repr():
    adapter = create_adapter("google", api_key="AIza-secret-123456", model="m")
    assert "secret" not in repr(adapter)


async def test_error_description_is_the_shared_localized_headline(provider_server):
    from providers.error_description import describe_error

    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_PROMPT_BLOCKED))
    english, japanese = describe_error(out.error, "en"), describe_error(out.error, "ja")
    assert english and japanese and english != japanese


async def test_calls_round_trip_with_their_signatures_for_replay(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_PARALLEL_CALLS))
    assert [c.provider_fields for c in out.calls] == [{"thought_signature": GEMINI_SIG_B}, {}]
    history = [Message("user", "q"), Message("assistant", out.text, tool_calls=out.calls)]
    parts = build_body(ChatRequest(messages=history), capabilities_of("google", "gemini-2.5-flash"))["contents"][1]["parts"]
    assert [(p["functionCall"]["name"], p.get("thoughtSignature")) for p in parts] == [
        ("get_weather", GEMINI_SIG_B), ("get_time", None)]
