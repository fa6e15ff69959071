"""Native web search on the chat-completions family: which request carries which search
field (through the real openai SDK and the local replay server), and the pages an answer
cites (`url_citation` annotations) on the done chunk.

Request forms: OpenRouter gets its `openrouter:web_search` server tool for a model that
takes tools and the older `web` plugin (deprecated for the server tool) only for one that
takes none; DeepSeek, Z.ai and custom endpoints never get a search field. OpenAI itself
searches with the Responses API's `web_search` tool (test_openai_responses_request.py,
test_openai_responses_stream.py); its chat search models are no route of the bot any more,
but their annotations-only chunks still read the same on any chat-completions endpoint.
The streams are written from the documented shapes (tests/support/data_openai_search.py:
no recorded corpus stream carries annotations).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.capabilities import capabilities_of
from providers.model_capabilities import RouteHints
from providers.openai_compat.normalize import END_OF_BODY, new_stream_state
from providers.openai_compat.request import (
    OPENROUTER_SEARCH_TOOL,
    OPENROUTER_WEB_RESULTS,
    build_request,
    untyped_arguments,
)
from providers.streaming import SSEDecoder
from providers.types import (
    ChatRequest,
    Message,
    RawStreamChunk,
    Source,
    Usage,
    WebSearch,
)
from tests.support import data_openai as fx
from tests.support import data_openai_search as ws
from tests.support.data_openai import TOOLS
from tests.support.data_provider_families import FAMILY
from tests.support.drive_adapter import (
    Stream,
    StreamOutcome,
    connection,
    pure_outcome,
    served_outcome,
    summarize,
)
from tests.support.fake_provider_server import Reply

OPENAI_FAMILY = FAMILY["openai"]
SEARCH = WebSearch(max_searches=3)
SEARCH_FIELDS = ("plugins", "web_search_options")
CITED_SOURCES = [Source(url, title) for url, title in ws.CITED]
# What OpenRouter's model list says of a model that takes no tools (`supported_parameters`).
NO_TOOLS = RouteHints(listed_parameters=frozenset({"temperature", "max_tokens"}))
PLUGIN = [{"id": "web", "max_results": OPENROUTER_WEB_RESULTS}]


def server_tool(search: WebSearch = SEARCH) -> dict:
    """The search server tool as the body carries it: each search's pages bounded, and all
    of them by the searches the request allows (the tool takes no bound on searches)."""
    return {"type": OPENROUTER_SEARCH_TOOL,
            "parameters": {"max_results": OPENROUTER_WEB_RESULTS,
                           "max_total_results": OPENROUTER_WEB_RESULTS * search.max_searches}}


def server_tools_in(body: dict) -> list[dict]:
    return [tool for tool in body.get("tools", ()) if tool.get("type") == OPENROUTER_SEARCH_TOOL]


def ask(web_search: WebSearch | None = SEARCH, **fields) -> ChatRequest:
    return ChatRequest(messages=[Message("user", "What did the central bank decide today?")],
                       system="Be brief.", web_search=web_search, **fields)


async def sent_body(server, provider: str, model: str, request: ChatRequest, **options) -> dict:
    """The JSON body the real SDK sent for `request`."""
    server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    await served_outcome(server, provider, request=request, model=model, **options)
    return server.requests[-1].json


# ---- request forms (through the real SDK) -----------------------------------------------------
async def test_openrouter_request_carries_the_search_server_tool_when_search_is_on(provider_server):
    body = await sent_body(provider_server, "openrouter", "openai/gpt-4o", ask(temperature=0.3))
    assert body["tools"] == [server_tool()]
    assert not set(SEARCH_FIELDS) & set(body)  # the deprecated plugin is not sent beside it
    assert body["model"] == "openai/gpt-4o"  # no `:online` suffix (deprecated too)
    assert body["temperature"] == 0.3  # OpenRouter takes every sampling setting as before


async def test_openrouter_model_without_tools_gets_the_web_plugin(provider_server):
    """A model whose listing names no `tools` cannot call the server tool: the plugin, which
    searches once before the answer, serves it instead."""
    body = await sent_body(provider_server, "openrouter", "some/model-without-tools", ask(temperature=0.3),
                           hints=NO_TOOLS)
    assert body["plugins"] == PLUGIN
    assert "tools" not in body
    assert body["model"] == "some/model-without-tools"


async def test_openrouter_request_has_no_search_when_search_is_off(provider_server):
    off = await sent_body(provider_server, "openrouter", "openai/gpt-4o", ask(None, max_output_tokens=50))
    assert not set(SEARCH_FIELDS) & set(off) and not server_tools_in(off)
    # `max_tokens` is deprecated on OpenRouter: the cap goes as `max_completion_tokens`.
    assert set(off) == {"model", "messages", "stream", "stream_options", "max_completion_tokens"}
    assert off["max_completion_tokens"] == 50
    # A bound of no search at all sends no search either.
    none = await sent_body(provider_server, "openrouter", "openai/gpt-4o",
                           ask(WebSearch(max_searches=0), max_output_tokens=50))
    assert none == off


async def test_openrouter_server_tool_travels_beside_reasoning_and_function_tools(provider_server):
    body = await sent_body(provider_server, "openrouter", "anthropic/claude-sonnet-4.5",
                           ask(WebSearch(max_searches=2), reasoning_effort="low", tools=TOOLS))
    assert body["reasoning"] == {"effort": "low"}
    functions = [tool["function"]["name"] for tool in body["tools"] if tool.get("type") == "function"]
    assert functions == [tool.name for tool in TOOLS]
    assert body["tools"][-1] == server_tool(WebSearch(max_searches=2))  # after the functions
    assert "plugins" not in body


@pytest.mark.parametrize(("provider", "model"), [
    ("deepseek", "deepseek-chat"), ("deepseek", "deepseek-reasoner"),
    ("zai", "glm-4.6"), ("custom", "m-test"), ("custom", "gpt-4o-search-preview"),
])
async def test_no_search_field_ever_for_other_routes(provider_server, provider, model):
    """These routes get the bot's own tool instead: asking for a search changes nothing."""
    fields = {"temperature": 0.5, "max_output_tokens": 64, "reasoning_effort": "low", "tools": TOOLS}
    on = await sent_body(provider_server, provider, model, ask(SEARCH, **fields))
    off = await sent_body(provider_server, provider, model, ask(None, **fields))
    assert not set(SEARCH_FIELDS) & set(on)
    assert on == off


def test_bodies_without_search_are_unchanged_for_every_provider():
    """Without `web_search` the arguments are exactly those of a request that never heard of it."""
    for provider in ("openrouter", "deepseek", "zai", "custom"):
        for model in ("gpt-4o", "gpt-4o-search-preview", "m-test"):
            request = ask(None, max_output_tokens=9)
            plain = ChatRequest(messages=request.messages, system=request.system, max_output_tokens=9)
            built = untyped_arguments(build_request(capabilities_of(provider, model), request), None)
            assert built == untyped_arguments(build_request(capabilities_of(provider, model), plain), None)
            assert not set(SEARCH_FIELDS) & set(built["extra_body"])


# ---- sources from the stream (through the real SDK) --------------------------------------------
async def test_openrouter_sources_in_order_with_titles_and_text_unchanged(provider_server):
    cited = await served_outcome(provider_server, "openrouter", Reply(body=fx.sse_body(ws.OPENROUTER_CITED)),
                                 request=ask())
    plain = await served_outcome(provider_server, "openrouter",
                                 Reply(body=fx.sse_body(ws.without_annotations(ws.OPENROUTER_CITED))), request=ask())
    assert cited.error is None and cited.done is not None
    assert cited.text == plain.text == ws.ANSWER
    assert cited.done.sources == CITED_SOURCES
    assert cited.done.searches is None  # OpenRouter does not say what it searched for
    assert cited.done.usage == Usage(120, 30, None, None, 150, searches=1)
    assert cited.done.finish_reason == "stop"
    assert plain.done.sources is None
    # Only the done chunk carries them.
    assert all(chunk.sources is None for chunk in cited.chunks[:-1])


async def test_sources_from_an_annotations_only_chunk(provider_server):
    """OpenAI's chat search models send the citations in a chunk of their own; any
    chat-completions endpoint relaying them gives the same sources."""
    out = await served_outcome(provider_server, "custom", Reply(body=fx.sse_body(ws.OPENAI_CITED)),
                               request=ask(), model="gpt-4o-search-preview")
    assert out.text == ws.ANSWER
    assert out.done.sources == CITED_SOURCES
    assert out.done.searches is None
    assert out.done.usage == Usage(80, 25, None, None, 105)  # no search field went to it


async def test_citations_without_a_search_request_are_kept_but_no_search_is_counted(provider_server):
    """A search model searches even unasked, and a custom gateway may cite: the pages are
    the answer's either way; only a search the request asked for is counted."""
    out = await served_outcome(provider_server, "openrouter", Reply(body=fx.sse_body(ws.OPENROUTER_CITED)),
                               request=ask(None))
    assert out.done.sources == CITED_SOURCES
    assert out.done.usage == Usage(120, 30, None, None, 150)
    custom = await served_outcome(provider_server, "custom", Reply(body=fx.sse_body(ws.OPENAI_CITED)),
                                  request=ask())
    assert custom.done.sources == CITED_SOURCES
    assert custom.done.usage.searches is None  # no search field went to a custom endpoint


async def test_search_without_citations_counts_what_is_known_and_has_no_sources(provider_server):
    """The plugin searches once per request, cited or not; the server tool, which the model
    calls 0 to N times, counts only what says it searched (its usage report, or pages cited)."""
    plugin = await served_outcome(provider_server, "openrouter", Reply(body=fx.sse_body(fx.TEXT)), request=ask(),
                                  hints=NO_TOOLS)
    assert plugin.text == "Hello!" and plugin.done.sources is None
    assert plugin.done.usage == Usage(9, 2, None, None, 11, searches=1)
    tool = await served_outcome(provider_server, "openrouter", Reply(body=fx.sse_body(fx.TEXT)), request=ask())
    assert tool.done.sources is None
    assert tool.done.usage == Usage(9, 2, None, None, 11)


async def test_the_server_tools_reported_searches_are_the_count(provider_server):
    """OpenRouter's usage reports the searches its server tool ran (`web_search_requests`,
    under `server_tool_use_details` in chat-completions streams, `server_tool_use` in its
    API reference): that number is counted, cited pages or not."""
    for field in ("server_tool_use_details", "server_tool_use"):
        body = fx.sse_body(ws.with_server_tool_usage(ws.OPENROUTER_CITED, 2, field))
        out = await served_outcome(provider_server, "openrouter", Reply(body=body), request=ask())
        assert out.done.sources == CITED_SOURCES
        assert out.done.usage == Usage(120, 30, None, None, 150, searches=2)
        assert out.done.searches is None  # the queries are not reported
        uncited = fx.sse_body(ws.with_server_tool_usage(ws.without_annotations(ws.OPENROUTER_CITED), 3, field))
        out = await served_outcome(provider_server, "openrouter", Reply(body=uncited), request=ask())
        assert out.done.usage.searches == 3


async def test_cut_stream_after_citations_is_an_error_without_sources(provider_server):
    body = fx.sse_body(ws.OPENAI_CITED[:4], done=False)
    out = await served_outcome(provider_server, "custom", Reply(body=body), request=ask(),
                               model="gpt-4o-search-preview")
    assert out.done is None and out.error is not None and out.error.retryable
    assert ws.ANSWER.startswith(out.text)


# ---- the pure half: re-split, family suites, fuzz ----------------------------------------------
def pure(provider: str, body: bytes, pieces: list[bytes] | None = None, *, web_search: bool = False) -> StreamOutcome:
    """The adapter's pure half on `pieces` of `body`, its state made as `start_stream` makes it."""
    from providers.adapter import create_adapter

    adapter = create_adapter(provider, **connection(provider, "http://127.0.0.1:9"))
    state = new_stream_state(adapter.capabilities, ask(), verbatim_tool_calling=False, web_search=web_search)
    shared = {"stream": state}
    decoder = SSEDecoder()
    chunks = []
    events = [event for piece in (pieces or [body]) for event in decoder.feed(piece)]
    for event in [*events, *decoder.finish(), END_OF_BODY]:
        chunks.extend(adapter.process_chunk(RawStreamChunk(event, provider, shared)))
    return summarize(chunks)


def cut(body: bytes, points: list[int]) -> list[bytes]:
    marks = [0, *sorted(p % (len(body) + 1) for p in points), len(body)]
    return [body[a:b] for a, b in zip(marks, marks[1:], strict=False)]


CITED_BODIES = {"openrouter": fx.sse_body(ws.OPENROUTER_CITED), "custom": fx.sse_body(ws.OPENAI_CITED)}


@settings(max_examples=200, deadline=None)
@given(provider=st.sampled_from(sorted(CITED_BODIES)), points=st.lists(st.integers(0, 10_000), max_size=12),
       searched=st.booleans())
def test_resplitting_a_cited_stream_gives_the_same_sources(provider, points, searched):
    body = CITED_BODIES[provider]
    whole = pure(provider, body, web_search=searched)
    split = pure(provider, body, cut(body, points), web_search=searched)
    assert whole.done.sources == split.done.sources == CITED_SOURCES
    assert (split.text, split.done.usage) == (whole.text, whole.done.usage)
    assert whole.done.usage.searches == (1 if searched else None)


@pytest.mark.parametrize("name", OPENAI_FAMILY.stream_names())
@settings(max_examples=20, deadline=None)
@given(points=st.lists(st.integers(0, 100_000), max_size=6))
def test_family_streams_resplit_give_the_same_sources(name, points):
    """Every stream of the family suite (own and, when present, the corpus) gives the same
    sources however it is split: none of them cites a page."""
    stream: Stream = OPENAI_FAMILY.stream(name)
    whole = pure_outcome(OPENAI_FAMILY, stream)
    split = pure_outcome(OPENAI_FAMILY, stream, cut(stream.body, points))
    assert (whole.done and whole.done.sources) == (split.done and split.done.sources)
    if whole.done is not None:
        assert whole.done.sources is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
URLS = st.sampled_from(["https://a.example/x", "http://b.example", "ftp://c.example", "javascript:alert(1)",
                        "", "  https://d.example/pad  ", "HTTPS://E.EXAMPLE/up"])
CITATION_ITEM = st.one_of(
    JSON,
    st.builds(lambda url, title: {"type": "url_citation", "url_citation": {"url": url, "title": title}},
              URLS | JSON, st.text(max_size=10) | JSON),
    st.builds(lambda inner: {"type": "url_citation", "url_citation": inner}, JSON),
    st.builds(lambda kind, url: {"type": kind, "url_citation": {"url": url}}, JSON, URLS),
)
ANNOTATIONS = JSON | st.lists(CITATION_ITEM, max_size=5)


@settings(max_examples=300, deadline=None)
@given(annotations=ANNOTATIONS, provider=st.sampled_from(["openrouter", "custom"]))
def test_malformed_annotations_are_left_out_never_raised(annotations, provider):
    body = fx.sse_body(ws.with_annotations(annotations))
    out = pure(provider, body)  # summarize checks the chunk shapes; an exception fails the test
    assert out.error is None and out.text == "Grounded answer."
    for source in out.done.sources or ():
        assert isinstance(source, Source) and source.url == source.url.strip()
        assert source.url.lower().startswith(("https://", "http://"))
        assert source.title is None or (isinstance(source.title, str) and source.title.strip())


def test_annotation_shapes_that_are_left_out():
    kept = ws.citation("https://ok.example/a", "  Kept  ")
    annotations = [
        {"type": "file_citation", "file_citation": {"file_id": "f"}},
        {"type": "url_citation"},
        {"type": "url_citation", "url_citation": "https://flat.example"},
        {"type": "url_citation", "url_citation": {"url": 5}},
        {"type": "url_citation", "url_citation": {"url": "javascript:alert(1)", "title": "x"}},
        {"url": "https://untyped.example"},
        kept,
        ws.citation("https://ok.example/b", None),
        {"type": "url_citation", "url_citation": {"url": "https://ok.example/c", "title": 7}},
    ]
    out = pure("openrouter", fx.sse_body(ws.with_annotations(annotations)))
    # Each chunk carries the same list: repeats are kept (the stream layer keeps each URL once).
    expected = [Source("https://ok.example/a", "Kept"), Source("https://ok.example/b"), Source("https://ok.example/c")]
    assert out.done.sources == expected * 2
    assert out.done.searches is None


async def test_served_and_pure_halves_agree_on_sources(provider_server):
    for provider, body in CITED_BODIES.items():
        served = await served_outcome(provider_server, provider, Reply(body=body, random_pieces=3, max_piece=17),
                                      request=ask(), model="gpt-4o-search-preview")
        searched = provider == "openrouter"  # a custom endpoint never gets the search field
        assert served.done.sources == pure(provider, body, web_search=searched).done.sources == CITED_SOURCES
        assert served.done.usage == pure(provider, body, web_search=searched).done.usage


def test_cited_fixture_is_what_the_documented_shape_says():
    """The fixtures keep OpenAI's nested `url_citation` object (not a flat annotation)."""
    for event in ws.OPENROUTER_CITED + ws.OPENAI_CITED:
        for choice in event["choices"]:
            for item in choice["delta"].get("annotations", []):
                assert item["type"] == "url_citation" and set(item) == {"type", "url_citation"}
                assert {"url", "start_index", "end_index"} <= set(item["url_citation"])
    json.dumps(ws.OPENROUTER_CITED)
