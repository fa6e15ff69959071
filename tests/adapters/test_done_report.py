"""The `done` chunk's typed usage and finish reason, for every adapter family.

Each family converts its provider's usage once (`openai_usage`, `responses_usage`, `anthropic_usage`,
`gemini_usage`); these tests pin the exact `Usage` of real corpus streams and of own
fixtures that carry every field, through the real SDKs and the replay server, and check
that how the body is split in transport never changes it.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.anthropic_native.events import AnthropicStream, anthropic_usage, process_event
from providers.capabilities import capabilities_of
from providers.done_report import finish_reason_of, merge_report, usage_of
from providers.gemini.events import GeminiStream, gemini_usage, process_payload
from providers.openai_compat.done import openai_usage
from providers.openai_compat.normalize import END_OF_BODY, new_stream_state
from providers.openai_compat.normalize import process_event as process_openai_event
from providers.openai_responses.events import new_stream as new_responses_stream
from providers.openai_responses.events import process_event as process_responses_event
from providers.streaming import SSEDecoder
from providers.types import ProcessedChunk, Usage
from tests.support import data_openai as fx
from tests.support import data_openai_responses as rx
from tests.support.data_anthropic import ANTHROPIC_CACHED_USAGE, a_text_block, anthropic_events
from tests.support.data_gemini import GEMINI_ALL_USAGE, g_chunk
from tests.support.drive_adapter import HELLO, check_transport_splits, served_outcome
from tests.support.env_corpus import CORPUS, requires_corpus
from tests.support.fake_provider_server import Reply

ALL_FIELDS = Usage(input_tokens=100, output_tokens=50, reasoning_tokens=30, cached_input_tokens=40,
                   total_tokens=150)
RESPONSES_ALL_FIELDS = rx.usage(100, 50, reasoning=30, cached=40)


def openai_last_chunk(body: bytes, cuts: list[int] = ()) -> ProcessedChunk:
    """The OpenAI family's pure half on `body` read in pieces split at `cuts`: its last chunk."""
    state = new_stream_state(capabilities_of("custom", "m"), HELLO, verbatim_tool_calling=False)
    decoder = SSEDecoder()
    chunks: list[ProcessedChunk] = []
    bounds = [0, *sorted(cut % (len(body) + 1) for cut in cuts), len(body)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        for event in decoder.feed(body[start:end]):
            chunks.extend(process_openai_event(state, event))
    for event in [*decoder.finish(), END_OF_BODY]:
        chunks.extend(process_openai_event(state, event))
    return chunks[-1]


# ---- the shared rules ----------------------------------------------------------------------
def test_merge_keeps_earlier_fields_and_later_reports_win():
    merged: dict = {}
    merge_report(merged, {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1})
    merge_report(merged, {"output_tokens": 40, "input_tokens": None})
    merge_report(merged, "not a report")
    assert merged == {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 40}


def test_total_is_derived_only_when_not_reported():
    assert usage_of(100, 50) == Usage(100, 50, None, None, 150)
    assert usage_of(100, 50, total_tokens=170) == Usage(100, 50, None, None, 170)
    assert usage_of(100, None) == Usage(100, None, None, None, None)
    assert usage_of(None, None) is None


def test_finish_reason_of_unknown_missing_and_after_calls():
    table = {"stop": "stop", "length": "length"}
    assert finish_reason_of("length", table, made_calls=True) == "length"
    assert finish_reason_of("stop", table, made_calls=True) == "tool_calls"
    assert finish_reason_of("stop", table, made_calls=False) == "stop"
    assert finish_reason_of("eos", table, made_calls=False) == "other"
    assert finish_reason_of(None, table, made_calls=False) is None
    assert finish_reason_of(7, table, made_calls=False) is None


# ---- each family's conversion --------------------------------------------------------------
def test_openai_usage_all_fields():
    raw = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150,
           "completion_tokens_details": {"reasoning_tokens": 30}, "prompt_tokens_details": {"cached_tokens": 40}}
    assert openai_usage(raw) == ALL_FIELDS
    del raw["total_tokens"]
    assert openai_usage(raw) == ALL_FIELDS


def test_openai_usage_deepseek_cache_hits_and_wrong_types():
    raw = {"prompt_tokens": 100, "completion_tokens": 50, "prompt_cache_hit_tokens": 40,
           "completion_tokens_details": {"reasoning_tokens": 30}}
    assert openai_usage(raw) == ALL_FIELDS
    junk = {"prompt_tokens": "100", "completion_tokens": True, "completion_tokens_details": [30],
            "prompt_tokens_details": {"cached_tokens": 4.5}, "total_tokens": 150.0}
    assert openai_usage(junk) == Usage(total_tokens=150)
    assert openai_usage({}) is None


def test_anthropic_usage_counts_cache_writes_and_reads_as_input():
    raw = {"input_tokens": 40, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 40,
           "output_tokens": 50}
    assert anthropic_usage(raw) == Usage(100, 50, None, 40, 150)
    assert anthropic_usage({"output_tokens": 7}) == Usage(None, 7, None, None, None)


def test_gemini_usage_counts_thoughts_as_output():
    raw = {"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 30,
           "cachedContentTokenCount": 40, "totalTokenCount": 150}
    assert gemini_usage(raw) == ALL_FIELDS
    # Cut by max tokens while thinking: no candidates count at all.
    assert gemini_usage({"promptTokenCount": 15, "thoughtsTokenCount": 2, "totalTokenCount": 17}) == Usage(
        15, 2, 2, None, 17)


# ---- finish reasons the fixtures do not reach ------------------------------------------------
@pytest.mark.parametrize(("native", "expected"), [
    ("stop", "stop"), ("length", "length"), ("tool_calls", "tool_calls"), ("function_call", "tool_calls"),
    ("content_filter", "content_filter"), ("eos", "other"),
])
def test_openai_finish_reasons(native, expected):
    body = fx.sse_body([fx.chunk({"content": "x"}), fx.chunk({}, native)])
    done = openai_last_chunk(body)
    assert (done.type, done.finish_reason) == ("done", expected)


def test_openai_stop_after_calls_is_tool_calls():
    body = fx.sse_body([fx.chunk({"tool_calls": [fx.tool_delta(0, id="c1", name="get_time", arguments="{}")]}),
                        fx.chunk({}, "stop")])
    done = openai_last_chunk(body)
    assert (done.type, done.finish_reason) == ("done", "tool_calls")


@pytest.mark.parametrize(("native", "expected"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "tool_calls"),
    ("refusal", "content_filter"), ("pause_turn", "other"),
])
def test_anthropic_finish_reasons(native, expected):
    state = AnthropicStream()
    chunks = []
    for _, payload in anthropic_events([a_text_block(0, ["x"])], native, 3):
        chunks.extend(process_event(state, payload["type"], payload))
    assert (chunks[-1].type, chunks[-1].finish_reason) == ("done", expected)


@pytest.mark.parametrize(("native", "expected"), [
    ("STOP", "stop"), ("MAX_TOKENS", "length"), ("SPII", "content_filter"), ("OTHER", "other"),
    ("LANGUAGE", "other"),
])
def test_gemini_finish_reasons(native, expected):
    state = GeminiStream()
    process_payload(state, g_chunk([{"text": "x"}], finish=native))
    done = process_payload(state, None, end=True)[-1]
    assert (done.type, done.finish_reason) == ("done", expected)


# ---- own fixtures with every field, through the SDKs -----------------------------------------
async def test_openai_family_all_fields(provider_server):
    for provider in ("openrouter", "deepseek", "zai", "custom"):
        provider_server.reply(Reply(body=fx.sse_body(fx.USAGE_ALL_FIELDS)))
        out = await served_outcome(provider_server, provider)
        assert (out.done.finish_reason, out.done.usage) == ("stop", ALL_FIELDS), provider


async def test_responses_all_fields(provider_server):
    body = rx.sse_body([rx.created(), *rx.message(0, ["x"]), rx.completed(RESPONSES_ALL_FIELDS)])
    out = await served_outcome(provider_server, "openai", Reply(body=body))
    assert (out.done.finish_reason, out.done.usage) == ("stop", ALL_FIELDS)
    await check_transport_splits(provider_server, "openai", body)


@pytest.mark.parametrize(("ended", "expected"), [
    (rx.completed(), "stop"), (rx.incomplete("max_output_tokens"), "length"),
    (rx.incomplete("content_filter"), "content_filter"), (rx.incomplete("max_messages"), "other"),
])
def test_responses_finish_reasons(ended, expected):
    state = new_responses_stream("openai")
    events = [(e["type"], json.dumps(e).encode()) for e in [rx.created(), *rx.message(0, ["x"]), ended]]
    done = [chunk for event in events for chunk in process_responses_event(state, event)][-1]
    assert (done.type, done.finish_reason) == ("done", expected)


async def test_anthropic_all_fields(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_CACHED_USAGE))
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(100, 50, None, 40, 150))


async def test_gemini_all_fields(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_ALL_USAGE))
    assert (out.done.finish_reason, out.done.usage) == ("stop", ALL_FIELDS)


# ---- real corpus streams -----------------------------------------------------------------------
# name -> (provider, finish reason, usage), the usage read by hand from the stream's last report.
CORPUS_USAGE = {
    "openai/chat_text_include_usage": ("custom", "stop", Usage(78, 9, 0, 0, 87)),
    "openrouter/fallback_models_xai": ("openrouter", "stop", Usage(687, 187, 118, 679, 874)),
    "deepseek/reasoner_tool_call": ("deepseek", "tool_calls", Usage(339, 83, 39, 320, 422)),
    "zai/glm_thinking_reasoning_content": ("zai", "stop", Usage(13, 564, 561, 0, 577)),
    # message_start has the input and cache counts, message_delta only the output.
    "anthropic/tool_use_text_then_tool": ("anthropic", "tool_calls", Usage(377, 65, None, 0, 442)),
    "gemini/thinking_reply_thought_summary": ("google", "stop", Usage(10, 588, 540, None, 598)),
}


@requires_corpus
@pytest.mark.parametrize("name", sorted(CORPUS_USAGE))
async def test_corpus_usage(provider_server, name):
    provider, finish, usage = CORPUS_USAGE[name]
    reply = Reply.from_corpus(CORPUS, name)
    if provider in ("anthropic", "google"):
        out = await served_outcome(provider_server, provider, reply)
    else:
        provider_server.reply(reply)
        out = await served_outcome(provider_server, provider)
    assert (out.done.finish_reason, out.done.usage) == (finish, usage)


# ---- transport splits never change the report ------------------------------------------------
async def test_native_all_fields_survive_transport_splits(provider_server):
    await check_transport_splits(provider_server, "anthropic", Reply.named_sse(ANTHROPIC_CACHED_USAGE).body)
    await check_transport_splits(provider_server, "google", GEMINI_ALL_USAGE)


async def test_openai_all_fields_survive_transport_splits(provider_server):
    for seed in (1, 2, 3):
        provider_server.reply(Reply(body=fx.sse_body(fx.USAGE_ALL_FIELDS), random_pieces=seed, max_piece=7))
        out = await served_outcome(provider_server, "deepseek")
        assert (out.done.finish_reason, out.done.usage) == ("stop", ALL_FIELDS)


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(0, 2_000), max_size=12))
def test_openai_report_does_not_depend_on_the_split(cuts):
    body = fx.sse_body(fx.USAGE_ALL_FIELDS)
    done = openai_last_chunk(body, cuts)
    assert (done.type, done.finish_reason, done.usage) == ("done", "stop", ALL_FIELDS)
