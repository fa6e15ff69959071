"""Anthropic web search streams, written from the documented event shapes.

The shapes follow Anthropic's web search tool page
(https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool: "Streaming",
"Response", "Errors"; checked 2026-12-03) and the citations page
(https://platform.claude.com/docs/en/build-with-claude/citations: `citations_delta`):

- a `server_tool_use` block named `web_search` opens with `"input": {}` and streams its
  input as `input_json_delta` pieces (`{"query": ...}`), then stops;
- a `web_search_tool_result` block arrives whole in its `content_block_start`: `content`
  is a list of `web_search_result` objects (url, title, encrypted_content, page_age) or an
  error object `{"type": "web_search_tool_result_error", "error_code": ...}`;
- the answer's text is split into text blocks at its citations; a cited block gets one
  `citations_delta` per citation (`web_search_result_location`: url, title,
  encrypted_index, cited_text) next to its `text_delta`s;
- the usage of `message_delta` carries `server_tool_use.web_search_requests`.

No shared corpus stream has web search events (checked: the recorded `server_tool_use`
blocks are `tool_search_tool_bm25` and MCP), so these own streams are what the tests use.
`search_stream` builds one answer with every text and query piece split as asked, so a
property test can re-split it and expect the same outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from providers.types import Source, Usage
from tests.support.data_anthropic import a_delta, a_start, a_stop

Event = tuple[str, dict]

SHANNON_WIKI = "https://en.wikipedia.org/wiki/Claude_Shannon"
SHANNON_WIKI_TITLE = "Claude Shannon - Wikipedia"
SHANNON_BRIT = "https://www.britannica.com/biography/Claude-Shannon"
SHANNON_BRIT_TITLE = "Claude Shannon | Biography & Facts | Britannica"
QUERY = "claude shannon birth date"
QUERY_TOO_MANY = "claude shannon petoskey michigan"


def message_start(input_tokens: int = 2100) -> Event:
    return ("message_start", {"type": "message_start", "message": {
        "id": "msg_search", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "output_tokens": 1, "service_tier": "standard"}}})


def message_end(stop_reason: str, output_tokens: int, searches: int | None, input_tokens: int = 6039) -> list[Event]:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 0, "output_tokens": output_tokens}
    if searches is not None:
        usage["server_tool_use"] = {"web_search_requests": searches}
    return [("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": usage}),
            ("message_stop", {"type": "message_stop"})]


def text_block(index: int, pieces: Sequence[str], citations: Sequence[dict] = ()) -> list[Event]:
    """A text block; a cited one gets its citations_delta events before its text, as streamed."""
    start: dict[str, Any] = {"type": "text", "text": ""}
    if citations:
        start["citations"] = []
    return [a_start(index, start),
            *[a_delta(index, {"type": "citations_delta", "citation": c}) for c in citations],
            *[a_delta(index, {"type": "text_delta", "text": p}) for p in pieces], a_stop(index)]


def search_use(index: int, ident: str, pieces: Sequence[str], name: str = "web_search",
               start_input: dict | None = None) -> list[Event]:
    """A server tool block: its input streamed as partial JSON pieces."""
    block = {"type": "server_tool_use", "id": ident, "name": name, "input": start_input or {}}
    return [a_start(index, block),
            *[a_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces], a_stop(index)]


def result(url: str, title: str, age: str = "April 30, 2025") -> dict:
    return {"type": "web_search_result", "url": url, "title": title,
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y==",
            "page_age": age}


def search_result(index: int, ident: str, content: list[dict] | dict) -> list[Event]:
    return [a_start(index, {"type": "web_search_tool_result", "tool_use_id": ident, "content": content}),
            a_stop(index)]


def search_error(index: int, ident: str, code: str) -> list[Event]:
    return search_result(index, ident, {"type": "web_search_tool_result_error", "error_code": code})


def citation(url: str, title: str | None, cited: str) -> dict:
    found: dict[str, Any] = {"type": "web_search_result_location", "url": url, "cited_text": cited,
                             "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm=="}
    if title is not None:
        found["title"] = title
    return found


def query_pieces(query: str) -> list[str]:
    """The input JSON the API streams for a query, in pieces as recorded (an empty one first)."""
    raw = json.dumps({"query": query})
    return ["", raw[:7], raw[7:19], raw[19:]]


WIKI_BORN = citation(SHANNON_WIKI, SHANNON_WIKI_TITLE,
                     "Claude Elwood Shannon (April 30, 1916 – February 24, 2001) was an American mathematician")
BRIT_PLACE = citation(SHANNON_BRIT, SHANNON_BRIT_TITLE, "born April 30, 1916, Petoskey, Michigan, U.S.")
WIKI_PLACE = citation(SHANNON_WIKI, SHANNON_WIKI_TITLE, "born in Petoskey, Michigan")

# The answer's text, block by block, as the API splits it at its citations.
INTRO = "I'll search for when Claude Shannon was born."
SEGMENTS: list[tuple[str, tuple[dict, ...]]] = [
    ("Based on the search results, ", ()),
    ("Claude Shannon was born on April 30, 1916", (WIKI_BORN,)),
    (", in ", ()),
    ("Petoskey, Michigan", (BRIT_PLACE, WIKI_PLACE)),
    (". He is known as the father of information theory.", ()),
]
TEXT = INTRO + "\n\n" + "".join(text for text, _ in SEGMENTS)
SOURCES = [Source(SHANNON_WIKI, SHANNON_WIKI_TITLE), Source(SHANNON_BRIT, SHANNON_BRIT_TITLE),
           Source(SHANNON_WIKI, SHANNON_WIKI_TITLE)]
SEARCHES = [QUERY]  # the second search went past max_uses: an error result, not searched
USAGE = Usage(6039, 931, None, 0, 6970, False, 1)


@dataclass(frozen=True)
class SearchSplit:
    """How the pieces of `search_stream` are cut: the intro, each segment, the query's JSON."""

    intro: Sequence[str] = (INTRO,)
    segments: Sequence[Sequence[str]] = tuple((text,) for text, _ in SEGMENTS)
    query: Sequence[str] = tuple(query_pieces(QUERY))


def search_stream(split: SearchSplit = SearchSplit(), *, stop_reason: str = "end_turn",
                  tail: Sequence[Callable[[int], list[Event]]] = ()) -> list[Event]:
    """An answer that searches, searches once more past max_uses (an error result), then
    answers in cited and uncited text blocks; `tail` makes the blocks after the text (a
    call), each from its index."""
    blocks: list[list[Event]] = [
        text_block(0, split.intro),
        search_use(1, "srvtoolu_01", split.query),
        search_result(2, "srvtoolu_01", [result(SHANNON_WIKI, SHANNON_WIKI_TITLE),
                                         result(SHANNON_BRIT, SHANNON_BRIT_TITLE, "May 2, 2025")]),
        search_use(3, "srvtoolu_02", query_pieces(QUERY_TOO_MANY)),
        search_error(4, "srvtoolu_02", "max_uses_exceeded"),
    ]
    for i, ((_, cited), pieces) in enumerate(zip(SEGMENTS, split.segments, strict=True)):
        blocks.append(text_block(5 + i, pieces, cited))
    for i, make in enumerate(tail):
        blocks.append(make(5 + len(SEGMENTS) + i))
    events = [message_start()]
    for block in blocks:
        events.extend(block)
    return [*events, *message_end(stop_reason, 931, 1)]


SEARCH_EVENTS = search_stream()
