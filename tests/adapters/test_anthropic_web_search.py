"""Anthropic's native web search: the server tool in the request, sources and queries out of the stream.

The request is read where the real anthropic SDK sent it (the replay server); the streams
are hand-written from Anthropic's documented event shapes (tests/support/data_anthropic_search.py,
https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool), served
through the SDK or fed to the adapter's pure half. Re-splitting a stream (its text and
query pieces, its bytes in transport) must not change its text, sources or queries, and
damaged search events end in a clear error or are left out, never in an exception.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.adapter import create_adapter
from providers.anthropic_native.request import build_arguments
from providers.capabilities import capabilities_of
from providers.types import ChatRequest, Message, Source, ToolSpec, Usage, WebSearch
from tests.support.data_anthropic import ANTHROPIC_REDACTED, a_tool_block
from tests.support.data_anthropic_search import (
    INTRO,
    QUERY,
    SEARCH_EVENTS,
    SEARCHES,
    SEGMENTS,
    SHANNON_BRIT,
    SHANNON_WIKI,
    SHANNON_WIKI_TITLE,
    SOURCES,
    TEXT,
    USAGE,
    SearchSplit,
    citation,
    message_end,
    message_start,
    query_pieces,
    result,
    search_error,
    search_result,
    search_stream,
    search_use,
    text_block,
)
from tests.support.data_mutations import (
    JUNK_VALUES,
    MUTATION_KINDS,
    json_paths,
    mutate_event,
    mutate_lines,
    replace_at,
    transport_pieces,
)
from tests.support.data_provider_families import ANTHROPIC
from tests.support.data_splits import splits
from tests.support.drive_adapter import (
    Stream,
    StreamOutcome,
    connection,
    native_raws,
    pure_outcome,
    served_outcome,
    summarize,
)
from tests.support.env_corpus import CORPUS, corpus_streams, requires_corpus
from tests.support.fake_provider_server import Reply, split_events

ASK = [Message("user", "When was Claude Shannon born?")]
WEATHER = ToolSpec("get_weather", "Current weather", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})
SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 4}
FUZZ = settings(max_examples=150, deadline=None)


def stream_of(events: list[tuple[str, dict]]) -> Stream:
    return Stream("anthropic", Reply.named_sse(events))


def body_of(events: list[tuple[str, dict]]) -> bytes:
    return Reply.named_sse(events).body


def feed(body: bytes, cuts: list[int] | tuple[int, ...] = ()) -> StreamOutcome:
    """The adapter's pure half on `body` cut at `cuts`, nothing caught: an exception
    escaping `process_chunk` fails the test. Stops at the first error, as the stream does."""
    adapter = create_adapter("anthropic", **connection("anthropic", "http://127.0.0.1:9"))
    chunks = []
    for raw in native_raws(Stream("anthropic", Reply(body=body)), transport_pieces(body, list(cuts))):
        for chunk in adapter.process_chunk(raw):
            chunks.append(chunk)
            if chunk.type == "error":
                return summarize(chunks)
    return summarize(chunks)


def searched(out: StreamOutcome) -> tuple:
    """What a search answer must keep however it travelled."""
    done = out.done
    return (out.text, [c.function_call.name for c in out.chunks if c.type == "function_call"],
            None if done is None else (done.finish_reason, done.usage, done.sources, done.searches),
            None if out.error is None else (out.error.type, out.error.retryable))


async def sent_body(server, request: ChatRequest, **options) -> dict:
    out = await served_outcome(server, "anthropic", Reply.named_sse(SEARCH_EVENTS), request, **options)
    assert out.done is not None
    return server.requests[-1].json


# ---- the request, as the SDK sends it ------------------------------------------------------------
async def test_search_tool_is_sent_with_max_uses_when_asked(provider_server):
    body = await sent_body(provider_server, ChatRequest(messages=ASK, web_search=WebSearch(max_searches=4)))
    assert body["tools"] == [SEARCH_TOOL]


async def test_search_tool_goes_next_to_the_function_tools(provider_server):
    request = ChatRequest(messages=ASK, tools=[WEATHER], web_search=WebSearch(max_searches=4))
    body = await sent_body(provider_server, request)
    assert body["tools"] == [
        {"name": "get_weather", "description": "Current weather", "input_schema": dict(WEATHER.parameters)},
        SEARCH_TOOL,
    ]


async def test_no_search_tool_anywhere_when_search_is_off(provider_server):
    plain = await sent_body(provider_server, ChatRequest(messages=ASK))
    assert "tools" not in plain
    with_tools = await sent_body(provider_server, ChatRequest(messages=ASK, tools=[WEATHER]))
    assert [t["name"] for t in with_tools["tools"]] == ["get_weather"]
    for body in (plain, with_tools):
        assert "web_search" not in json.dumps(body)


async def test_a_model_without_web_search_gets_no_search_tool(provider_server):
    """Claude 3 refuses the server tool (a 400): it answers without searching."""
    request = ChatRequest(messages=ASK, tools=[WEATHER], web_search=WebSearch())
    body = await sent_body(provider_server, request, model="claude-3-opus-20240229")
    assert [t["name"] for t in body["tools"]] == ["get_weather"]
    assert "web_search" not in json.dumps(body)


def test_models_that_take_web_search():
    request = ChatRequest(messages=ASK, web_search=WebSearch(max_searches=2))
    takes = {model: "tools" in build_arguments(request, capabilities_of("anthropic", model)) for model in (
        "claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-haiku-4-5", "claude-3-7-sonnet-20250219",
        "claude-3-5-haiku-latest", "claude-3-5-sonnet-20241022", "claude-fable-5-1", "claude-gateway-alias",
        "claude-3-5-sonnet-20240620", "claude-3-haiku-20240307", "claude-2.1", "claude-instant-1.2")}
    assert [m for m, yes in takes.items() if not yes] == [
        "claude-3-5-sonnet-20240620", "claude-3-haiku-20240307", "claude-2.1", "claude-instant-1.2"]


def test_the_bots_own_search_tool_gives_way_to_the_native_one():
    own = ToolSpec("web_search", "Search the web", {"type": "object", "properties": {"query": {"type": "string"}}})
    native = build_arguments(ChatRequest(messages=ASK, tools=[own, WEATHER], web_search=WebSearch(1)), capabilities_of("anthropic", "claude-opus-4-6"))
    assert [(t.get("type"), t["name"]) for t in native["tools"]] == [
        (None, "get_weather"), ("web_search_20250305", "web_search")]
    off = build_arguments(ChatRequest(messages=ASK, tools=[own]), capabilities_of("anthropic", "claude-opus-4-6"))
    assert [t["name"] for t in off["tools"]] == ["web_search"] and "type" not in off["tools"][0]


def test_max_uses_is_at_least_one():
    arguments = build_arguments(ChatRequest(messages=ASK, web_search=WebSearch(max_searches=0)), capabilities_of("anthropic", "claude-opus-4-6"))
    assert arguments["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}]


# ---- the stream ----------------------------------------------------------------------------------
async def test_sources_in_citation_order_queries_and_searches_counted(provider_server):
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(SEARCH_EVENTS),
                               ChatRequest(messages=ASK, web_search=WebSearch(4)))
    # The citation-split blocks join as sent; only the search between makes a paragraph.
    assert out.text == TEXT
    assert out.calls == [] and out.thoughts == []
    assert [c.type for c in out.chunks if c.type != "text"] == ["done"]
    assert out.done.finish_reason == "stop"
    assert out.done.sources == SOURCES  # every citation, in order, repeats kept
    assert out.done.searches == SEARCHES == [QUERY]  # the max_uses_exceeded search did not run
    assert out.done.usage == USAGE and out.done.usage.searches == 1


async def test_server_tool_blocks_are_not_calls_next_to_a_real_call(provider_server):
    events = search_stream(stop_reason="tool_use",
                           tail=[lambda i: a_tool_block(i, "toolu_01", "get_weather", ['{"city": ', '"Paris"}'])])
    out = await served_outcome(provider_server, "anthropic", Reply.named_sse(events))
    assert out.call_summary == [("get_weather", {"city": "Paris"}, False)]
    assert [c.id for c in out.calls] == ["toolu_01"]
    assert out.text == TEXT
    assert (out.done.finish_reason, out.done.sources, out.done.searches) == ("tool_calls", SOURCES, SEARCHES)


def test_results_the_answer_did_not_cite_are_not_sources():
    events = [message_start(), *text_block(0, ["Let me look."]), *search_use(1, "srvtoolu_01", query_pieces(QUERY)),
              *search_result(2, "srvtoolu_01", [result(SHANNON_WIKI, SHANNON_WIKI_TITLE)]),
              *text_block(3, ["He was born in 1916."]), *message_end("end_turn", 40, 1)]
    out = feed(body_of(events))
    assert out.text == "Let me look.\n\nHe was born in 1916."
    assert (out.done.sources, out.done.searches, out.done.usage.searches) == (None, [QUERY], 1)


@pytest.mark.parametrize("code", ["unavailable", "max_uses_exceeded", "too_many_requests", "query_too_long",
                                  "invalid_tool_input"])
def test_an_error_result_does_not_fail_the_answer(code):
    events = [message_start(), *search_use(0, "srvtoolu_01", query_pieces(QUERY)),
              *search_error(1, "srvtoolu_01", code), *text_block(2, ["I could not search; from memory: 1916."]),
              *message_end("end_turn", 30, 1)]
    out = feed(body_of(events))
    assert out.error is None and out.done.finish_reason == "stop"
    assert out.text == "I could not search; from memory: 1916."
    assert (out.done.sources, out.done.searches) == (None, None)


def test_pause_turn_ends_the_answer_without_an_error():
    """A long search turn the API paused: a done chunk (`other`), the text and the query so far."""
    events = [message_start(), *text_block(0, [INTRO]), *search_use(1, "srvtoolu_01", query_pieces(QUERY)),
              *message_end("pause_turn", 60, 1)]
    out = feed(body_of(events))
    assert out.error is None and out.calls == []
    assert (out.text, out.done.finish_reason, out.done.searches, out.done.sources) == (INTRO, "other", [QUERY], None)


def test_a_citation_without_a_title_takes_its_results_title():
    events = [message_start(), *search_use(0, "srvtoolu_01", query_pieces(QUERY)),
              *search_result(1, "srvtoolu_01", [result(SHANNON_WIKI, SHANNON_WIKI_TITLE)]),
              *text_block(2, ["Born 1916."], [citation(SHANNON_WIKI, None, "1916"), citation(SHANNON_BRIT, None, "x")]),
              *message_end("end_turn", 10, 1)]
    assert feed(body_of(events)).done.sources == [Source(SHANNON_WIKI, SHANNON_WIKI_TITLE), Source(SHANNON_BRIT, None)]


def test_a_query_given_whole_at_block_start_is_kept():
    events = [message_start(), *search_use(0, "srvtoolu_01", [], start_input={"query": QUERY}),
              *text_block(1, ["ok"]), *message_end("end_turn", 3, 1)]
    assert feed(body_of(events)).done.searches == [QUERY]


def test_other_server_tools_and_other_citations_are_not_searches_or_sources():
    document = {"type": "char_location", "cited_text": "x", "document_index": 0, "document_title": "Doc",
                "start_char_index": 0, "end_char_index": 1}
    events = [message_start(), *search_use(0, "srvtoolu_01", ['{"url": "https://example.com"}'], name="web_fetch"),
              *text_block(1, ["Fetched."], [document]), *message_end("end_turn", 3, None)]
    out = feed(body_of(events))
    assert (out.text, out.done.sources, out.done.searches, out.done.usage.searches) == ("Fetched.", None, None, None)


def test_an_answer_without_search_reports_none():
    out = pure_outcome(ANTHROPIC, stream_of(ANTHROPIC_REDACTED))
    assert (out.done.sources, out.done.searches, out.done.usage.searches) == (None, None, None)


@requires_corpus
@pytest.mark.parametrize("name", corpus_streams("anthropic"))
def test_recorded_streams_have_no_web_search(name):
    """No recorded stream searched the web (their `web_search_requests` is 0 or absent):
    their other server tools (tool search, MCP) give no sources, queries or count."""
    out = pure_outcome(ANTHROPIC, Stream("anthropic", Reply.from_corpus(CORPUS, name)))
    if out.done is not None:
        assert (out.done.sources, out.done.searches, out.done.usage.searches) == (None, None, None)


# ---- damaged search events: left out, or a clear error ---------------------------------------------
def test_damaged_search_pieces_are_left_out():
    events = [message_start(), *search_use(0, "srvtoolu_01", ['{"query": "cut']),
              *search_use(1, "srvtoolu_02", ['{"query": 7}']),
              *search_result(2, "srvtoolu_02", "not a list"),  # type: ignore[arg-type]
              *search_result(3, "srvtoolu_02", [7, {"type": "web_search_result", "url": 5, "title": None}]),
              *text_block(4, ["Still here."], ["not an object", {"type": "web_search_result_location", "url": None},
                                               citation(SHANNON_WIKI, SHANNON_WIKI_TITLE, "x")]),
              *message_end("end_turn", 5, 2)]
    out = feed(body_of(events))
    assert out.error is None and out.text == "Still here."
    assert (out.done.sources, out.done.searches) == ([Source(SHANNON_WIKI, SHANNON_WIKI_TITLE)], None)


def test_a_citation_for_an_unknown_block_is_a_clear_error():
    events = [message_start(), *text_block(0, ["Partial"]),
              ("content_block_delta", {"type": "content_block_delta", "index": 9,
                                       "delta": {"type": "citations_delta", "citation": citation(SHANNON_WIKI, None, "x")}}),
              *message_end("end_turn", 5, 1)]
    out = feed(body_of(events))
    assert out.text == "Partial" and out.done is None
    assert (out.error.type, out.error.retryable) == ("api_error", False)
    assert out.error.message.startswith("malformed Anthropic stream: content_block_delta:")


# ---- re-split: the same text, sources and queries ---------------------------------------------------
WHOLE = searched(feed(body_of(SEARCH_EVENTS)))


@st.composite
def resplit(draw) -> SearchSplit:
    return SearchSplit(intro=draw(splits(INTRO)), segments=[draw(splits(text)) for text, _ in SEGMENTS],
                       query=draw(splits(json.dumps({"query": QUERY}))))


@FUZZ
@given(split=resplit(), cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_resplit_deltas_and_transport_give_the_same_outcome(split, cuts):
    assert searched(feed(body_of(search_stream(split)), cuts)) == WHOLE


async def test_transport_split_through_the_server_gives_the_same_outcome(provider_server):
    stream = stream_of(SEARCH_EVENTS)
    assert searched(await stream.served(provider_server)) == WHOLE
    for seed, size in ((1, 23), (2, 23), (3, 97), (4, 7)):
        assert searched(await stream.served(provider_server, random_pieces=seed, max_piece=size)) == WHOLE


def test_cut_at_every_event_boundary():
    """A stream cut anywhere shows a prefix of the text, invents no call, and ends in a
    retryable interruption; only the whole stream is done, with its sources."""
    events = split_events(body_of(SEARCH_EVENTS))
    for n in range(len(events)):
        out = feed(b"".join(events[:n]))
        assert TEXT.startswith(out.text) and out.calls == []
        assert out.done is None and out.error.retryable, n
    assert searched(feed(b"".join(events))) == WHOLE


def test_cut_at_every_byte_never_raises():
    body = body_of(SEARCH_EVENTS)
    for offset in range(0, len(body), 3):
        out = feed(body[:offset], [offset // 2])
        assert TEXT.startswith(out.text) and out.calls == []


# ---- fuzz ----------------------------------------------------------------------------------------
SEARCH_EVENT_AT = [i for i, (_, data) in enumerate(SEARCH_EVENTS)
                   if any(word in json.dumps(data) for word in ("server_tool_use", "web_search", "citation"))]


@FUZZ
@given(at=st.sampled_from(SEARCH_EVENT_AT), pick=st.integers(0, 10_000), junk=st.sampled_from(range(len(JUNK_VALUES))),
       cuts=st.lists(st.integers(0, 10_000), max_size=4))
def test_junk_in_a_search_event_is_left_out_or_a_clear_error(at, pick, junk, cuts):
    name, data = SEARCH_EVENTS[at]
    paths = json_paths(data)
    damaged = list(SEARCH_EVENTS)
    damaged[at] = (name, replace_at(data, paths[pick % len(paths)], JUNK_VALUES[junk]))
    out = feed(body_of(damaged), cuts)  # summarize: one done or one error, every chunk well-formed
    assert out.calls == []
    if out.error is not None:
        assert out.error.message.startswith(("malformed Anthropic stream", "Anthropic stream interrupted"))
    else:
        assert all(isinstance(s, Source) and isinstance(s.url, str) and s.url for s in out.done.sources or ())
        assert all(isinstance(q, str) and q for q in out.done.searches or ())
        assert out.done.usage is None or isinstance(out.done.usage, Usage)


@FUZZ
@given(kind=st.sampled_from(MUTATION_KINDS), pick=st.integers(0, 10_000), junk=st.integers(0, 100),
       cut=st.integers(0, 10_000), seed=st.integers(0, 2**32), cuts=st.lists(st.integers(0, 10_000), max_size=4))
def test_mutated_search_streams_never_raise(kind, pick, junk, cut, seed, cuts):
    body, broken = mutate_event(body_of(SEARCH_EVENTS), kind, pick, junk, cut)
    out = feed(body, cuts)
    if broken:
        assert out.error is not None and out.done is None
    feed(mutate_lines(body_of(SEARCH_EVENTS), random.Random(seed), 1 + seed % 3), cuts)
