"""Gemini's native web search (Grounding with Google Search), through the real google-genai SDK.

The request: the search tool is in the body exactly when `ChatRequest.web_search` is set,
in the form each model takes (providers/gemini/request.py), alone where the model refuses
it next to function declarations; every tool entry validates as the SDK's own `Tool`.
The stream: `groundingMetadata` becomes the done chunk's sources (in the order the answer
cites them, each with its title), its queries and `Usage.searches`, whatever payload it
came on and however the body is split; malformed metadata is left out, never raised.
"""

from __future__ import annotations

import json

import pytest
from google.genai import types as genai_types
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.adapter import create_adapter
from providers.capabilities import capabilities_of
from providers.gemini.request import build_body, search_tool
from providers.types import ChatRequest, Message, ProcessedChunk, Source, ToolSpec, Usage, WebSearch
from tests.support.data_gemini import GEMINI_THINK_TEXT, g_chunk, gemini_body
from tests.support.data_gemini_search import (
    ALJAZEERA,
    ANSWER,
    BBC,
    EXPECTED,
    FIRST,
    GEMINI_GROUNDED,
    GEMINI_GROUNDED_CALL,
    GEMINI_GROUNDED_SPREAD,
    METADATA,
    QUERIES,
    SECOND,
    SIG,
    UEFA,
    WIKIPEDIA,
    grounded,
    support,
    web,
)
from tests.support.data_mutations import WRONG, json_paths, replace_at, transport_pieces
from tests.support.data_provider_families import GEMINI
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

WEATHER = ToolSpec("get_weather", "Current weather", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
DECLARATIONS = {"functionDeclarations": [{"name": "get_weather", "description": "Current weather",
                                          "parametersJsonSchema": dict(WEATHER.parameters)}]}
GOOGLE_SEARCH = {"googleSearch": {}}
RETRIEVAL = {"googleSearchRetrieval": {"dynamicRetrievalConfig": {"mode": "MODE_DYNAMIC"}}}
COMBINED = {"includeServerSideToolInvocations": True}
QUESTION = [Message("user", "Who won Euro 2024, and where was the final?")]
SEARCHING = ChatRequest(messages=QUESTION, tools=[WEATHER], web_search=WebSearch(max_searches=2))
STREAMS = {"grounded": GEMINI_GROUNDED, "spread": GEMINI_GROUNDED_SPREAD, "call": GEMINI_GROUNDED_CALL}


async def sent_body(server, model: str, request: ChatRequest) -> dict:
    """The body the real SDK sent for `request` to `model`, checked against the SDK's own types."""
    out = await served_outcome(server, "google", Reply(body=GEMINI_THINK_TEXT), request, model=model)
    assert out.done is not None
    sent = server.requests[-1]
    assert sent.path == f"/v1beta/models/{model}:streamGenerateContent"
    body = sent.json
    assert body == build_body(request, capabilities_of("google", model))
    for tool in body.get("tools", []):
        genai_types.Tool.model_validate(tool)  # extra keys are refused: the names are the SDK's
    if "toolConfig" in body:
        genai_types.ToolConfig.model_validate(body["toolConfig"])
    return body


def searches_in(body: dict) -> list[dict]:
    return [t for t in body.get("tools", []) if "googleSearch" in t or "googleSearchRetrieval" in t]


# ---- the request the SDK sends ---------------------------------------------------------------
@pytest.mark.parametrize(("model", "tools", "tool_config"), [
    # Gemini 2.x refuse search next to function declarations: search alone.
    ("gemini-2.5-flash", [GOOGLE_SEARCH], None),
    ("gemini-2.0-flash", [GOOGLE_SEARCH], None),
    ("gemini-2.5-pro", [GOOGLE_SEARCH], None),
    # Gemini 3.x and later combine them, with the documented flag.
    ("gemini-3-pro-preview", [DECLARATIONS, GOOGLE_SEARCH], COMBINED),
    ("gemini-3.5-flash", [DECLARATIONS, GOOGLE_SEARCH], COMBINED),
    ("gemini-flash-latest", [DECLARATIONS, GOOGLE_SEARCH], COMBINED),
    # Gemini 1.5: the legacy retrieval tool, alone.
    ("gemini-1.5-flash", [RETRIEVAL], None),
    # Gemma grounds on nothing: its declarations only.
    ("gemma-3-27b-it", [DECLARATIONS], None),
])
async def test_search_tool_per_model_with_function_declarations(provider_server, model, tools, tool_config):
    body = await sent_body(provider_server, model, SEARCHING)
    assert body["tools"] == tools
    assert body.get("toolConfig") == tool_config
    assert "maxSearches" not in json.dumps(body)  # Gemini takes no bound on searches


@pytest.mark.parametrize(("model", "tool"), [
    ("gemini-2.5-flash", GOOGLE_SEARCH), ("gemini-3-pro-preview", GOOGLE_SEARCH),
    ("gemini-1.5-pro", RETRIEVAL), ("gemini-test", GOOGLE_SEARCH),
])
async def test_search_tool_alone_without_function_declarations(provider_server, model, tool):
    body = await sent_body(provider_server, model, ChatRequest(messages=QUESTION, web_search=WebSearch()))
    assert body["tools"] == [tool]
    assert "toolConfig" not in body  # nothing to combine


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview", "gemini-1.5-flash",
                                   "gemma-3-27b-it"])
async def test_no_search_tool_when_web_search_is_off(provider_server, model):
    off = ChatRequest(messages=QUESTION, tools=[WEATHER])
    body = await sent_body(provider_server, model, off)
    assert body["tools"] == [DECLARATIONS] and searches_in(body) == []
    assert "toolConfig" not in body and "googleSearch" not in json.dumps(body)
    bare = await sent_body(provider_server, model, ChatRequest(messages=QUESTION))
    assert "tools" not in bare and "toolConfig" not in bare


def test_models_named_in_the_forms():
    mixes = [capabilities_of("google", m).search_with_functions for m in (
        "gemini-1.5-flash", "gemini-2.0-flash", "models/gemini-2.5-pro", "gemini-3-flash-preview", "gemini-3.5-pro")]
    assert mixes == [False, False, False, True, True]
    assert search_tool(capabilities_of("google", "models/gemini-1.5-pro")) == RETRIEVAL
    assert search_tool(capabilities_of("google", "gemini-2.5-flash-lite")) == GOOGLE_SEARCH
    assert search_tool(capabilities_of("google", "gemma-3n-e4b-it")) is None


# ---- sources, queries and usage from the stream ----------------------------------------------
def test_fixture_metadata_is_googles_shape():
    for metadata in (METADATA, {"groundingChunks": [web(UEFA, "uefa.com")]}):
        parsed = genai_types.GroundingMetadata.model_validate(metadata)
        assert parsed.grounding_chunks and parsed.grounding_chunks[0].web.uri.startswith("https://")


def check_grounded(out: StreamOutcome, text: str = FIRST + SECOND) -> None:
    assert out.error is None and out.text == text
    assert out.done.sources == EXPECTED
    assert all(source.title for source in out.done.sources)
    assert out.done.searches == QUERIES
    assert out.done.usage.searches == 2
    # Only the done chunk carries them.
    assert all(c.sources is None and c.searches is None for c in out.chunks if c.type != "done")


async def test_grounded_answer_done_has_sources_in_citation_order(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_GROUNDED), SEARCHING,
                               model="gemini-2.5-flash")
    check_grounded(out)
    assert [s.url for s in out.done.sources] == [ALJAZEERA, BBC, UEFA, WIKIPEDIA]  # wikipedia: never cited
    assert (out.done.finish_reason, out.done.usage) == ("stop", Usage(12, 21, None, None, 33, searches=2))


async def test_metadata_spread_and_repeated_gives_the_same_sources(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_GROUNDED_SPREAD), SEARCHING)
    check_grounded(out)  # each page once, the empty query neither listed nor counted


async def test_search_and_function_call_together(provider_server):
    """Gemini 3's combination: server-side search parts show no text, the call is the bot's."""
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_GROUNDED_CALL), SEARCHING,
                               model="gemini-3-pro-preview")
    check_grounded(out, text=FIRST)
    assert out.call_summary == [("get_weather", {"city": "Berlin"}, False)]
    assert out.thoughts == [("signature", SIG)]
    assert out.done.finish_reason == "tool_calls"


async def test_answer_without_grounding_has_no_sources(provider_server):
    out = await served_outcome(provider_server, "google", Reply(body=GEMINI_THINK_TEXT), SEARCHING)
    assert (out.done.sources, out.done.searches, out.done.usage.searches) == (None, None, None)


async def test_searched_but_nothing_grounded(provider_server):
    body = gemini_body(grounded(ANSWER, {"webSearchQueries": QUERIES[:1]}))
    out = await served_outcome(provider_server, "google", Reply(body=body))
    assert (out.done.sources, out.done.searches, out.done.usage.searches) == ([], QUERIES[:1], 1)


async def test_uncited_pages_keep_their_order_and_a_missing_title_is_none(provider_server):
    metadata = {"groundingChunks": [web(BBC, None), {"web": {"uri": UEFA, "domain": "uefa.com"}},
                                    web(ALJAZEERA, "  ")]}
    out = await served_outcome(provider_server, "google", Reply(body=gemini_body(grounded(ANSWER, metadata))))
    assert out.done.sources == [Source(BBC, None), Source(UEFA, "uefa.com"), Source(ALJAZEERA, None)]
    assert (out.done.searches, out.done.usage.searches) == ([], 0)


async def test_malformed_pieces_are_left_out(provider_server):
    metadata = {
        "webSearchQueries": ["ok", 7, None, "ok"],
        "groundingChunks": [web("javascript:alert(1)", "x"), web(BBC, "bbc.com"), "junk", {"web": 3},
                            web(UEFA, 5), {"retrievedContext": {"uri": "gs://bucket/doc"}}, web(f"{WIKIPEDIA} x", "w")],
        "groundingSupports": [
            {"segment": {"startIndex": "12"}, "groundingChunkIndices": [1]},  # a string index: not placed
            support([0, 9, -1, True, 4, 1.0], 30, 40, "x"),  # only 4 (uefa) and 1 (bbc) are pages
            {"segment": [], "groundingChunkIndices": [1]}, 5, {"groundingChunkIndices": "1"},
        ],
    }
    out = await served_outcome(provider_server, "google", Reply(body=gemini_body(grounded(ANSWER, metadata))))
    assert out.error is None and out.text == FIRST + SECOND
    assert out.done.sources == [Source(UEFA, None), Source(BBC, "bbc.com")]
    assert (out.done.searches, out.done.usage.searches) == (["ok"], 1)


async def test_grounding_that_is_not_an_object_is_ignored(provider_server):
    for metadata in ("x", [METADATA], None, 3):
        out = await served_outcome(provider_server, "google", Reply(body=gemini_body(grounded(ANSWER, metadata))))
        assert out.error is None and out.done.sources is None and out.done.usage.searches is None


async def test_a_blocked_grounded_answer_ends_in_its_error(provider_server):
    payloads = [g_chunk([{"text": "Here is"}]), g_chunk([{"text": " a start"}], "SAFETY")]
    out = await served_outcome(provider_server, "google", Reply(body=gemini_body(grounded(payloads, METADATA))))
    assert out.done is None and (out.error.type, out.error.code) == ("content_blocked", "SAFETY")


@requires_corpus
@pytest.mark.parametrize("name", corpus_streams("gemini"))
async def test_recorded_streams_without_grounding_report_no_sources(provider_server, name):
    """No recorded Gemini stream carries groundingMetadata; none may invent sources."""
    reply = Reply.from_corpus(CORPUS, name)
    assert b"groundingMetadata" not in reply.body
    out = await served_outcome(provider_server, "google", reply)
    assert all(c.sources is None and c.searches is None for c in out.chunks)
    assert out.done is None or out.done.usage is None or out.done.usage.searches is None


# ---- re-split and cut: the family's suites, on the grounded streams ---------------------------
def _sources(out: StreamOutcome) -> tuple:
    done = out.done
    return None if done is None else (done.sources, done.searches, done.usage)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(STREAMS)), splits=st.lists(st.integers(0, 10_000), max_size=8))
def test_transport_splits_give_the_same_sources(name, splits):
    stream = Stream("google", Reply(body=STREAMS[name]))
    whole = pure_outcome(GEMINI, stream)
    split = pure_outcome(GEMINI, stream, transport_pieces(stream.body, splits))
    assert split.error is None and _sources(split) == _sources(whole)
    assert split.done.sources == EXPECTED


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_cut_at_every_event_boundary_never_gives_partial_sources(name):
    stream = Stream("google", Reply(body=STREAMS[name]))
    full = pure_outcome(GEMINI, stream)
    events = split_events(stream.body)
    for n in range(len(events)):
        cut = pure_outcome(GEMINI, stream, events[:n])
        assert cut.done is None or _sources(cut) == _sources(full)
        assert all(c.sources is None for c in cut.chunks if c.type != "done")


@pytest.mark.parametrize("name", sorted(STREAMS))
async def test_served_in_random_pieces_gives_the_same_sources(provider_server, name):
    stream = Stream("google", Reply(body=STREAMS[name]))
    whole = _sources(pure_outcome(GEMINI, stream))
    for seed, size in ((1, 5), (2, 17), (3, 64)):
        assert _sources(await stream.served(provider_server, random_pieces=seed, max_piece=size)) == whole


# ---- fuzz: malformed metadata is left out or a clear error, never an exception ---------------
def strict_outcome(body: bytes, pieces: list[bytes]) -> StreamOutcome:
    """The pure half with nothing caught: an exception from `process_chunk` fails the test."""
    adapter = create_adapter("google", **connection("google", "http://127.0.0.1:9"))
    chunks: list[ProcessedChunk] = []
    for raw in native_raws(Stream("google", Reply(body=body)), pieces):
        chunks.extend(adapter.process_chunk(raw))
        if chunks and chunks[-1].type == "error":
            break
    return summarize(chunks)


def check_fuzzed(out: StreamOutcome) -> None:
    if out.error is not None:  # only a payload the JSON reader refused (a lone surrogate)
        assert out.error.message.startswith("malformed Gemini stream"), out.error.message
        return
    assert out.text == FIRST + SECOND and out.done.finish_reason == "stop"
    sources, searches = out.done.sources, out.done.searches
    if sources is None:
        assert searches is None and out.done.usage.searches is None
        return
    urls = [s.url for s in sources]
    assert len(urls) == len(set(urls)) and set(urls) <= {UEFA, ALJAZEERA, WIKIPEDIA, BBC}
    assert all(s.title is None or (isinstance(s.title, str) and s.title.strip()) for s in sources)
    assert all(isinstance(q, str) and q.strip() for q in searches)
    assert out.done.usage.searches == len(searches)


PATHS = json_paths(METADATA)
KEYS = ["groundingChunks", "groundingSupports", "webSearchQueries", "web", "uri", "title", "segment",
        "startIndex", "partIndex", "groundingChunkIndices"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "x", UEFA, BBC, "javascript:x"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3),
                                                                inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=250, deadline=None)
@given(pick=st.integers(0, len(PATHS) - 1), wrong=st.sampled_from(WRONG),
       splits=st.lists(st.integers(0, 10_000), max_size=4))
def test_wrong_typed_metadata_is_ignored(pick, wrong, splits):
    body = gemini_body(grounded(ANSWER, replace_at(METADATA, PATHS[pick], wrong)))
    check_fuzzed(strict_outcome(body, transport_pieces(body, splits)))


@settings(max_examples=250, deadline=None)
@given(metadata=JSON, early=JSON, splits=st.lists(st.integers(0, 10_000), max_size=4))
def test_arbitrary_metadata_is_ignored(metadata, early, splits):
    body = gemini_body(grounded(grounded(ANSWER, early, 0), metadata))
    check_fuzzed(strict_outcome(body, transport_pieces(body, splits)))


def test_metadata_on_a_payload_without_content():
    """The metadata alone on a trailing payload (no parts) still reaches the done chunk."""
    body = gemini_body([g_chunk([{"text": FIRST + SECOND}]), grounded([g_chunk([], "STOP")], METADATA)[0]])
    out = strict_outcome(body, [body])
    assert out.text == FIRST + SECOND and out.done.sources == EXPECTED and out.done.searches == QUERIES
