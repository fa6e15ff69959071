"""Chat-completions streams of answers grounded on a web search, written for the tests.

No recorded stream in the shared corpus carries `annotations` (checked: no `url_citation`
in ../shared/corpus/openai or /openrouter), so these follow the documented shapes:

- OpenAI's search models stream `url_citation` annotations in `delta.annotations`, each
  `{"type": "url_citation", "url_citation": {"url", "title", "start_index", "end_index"}}`
  (https://platform.openai.com/docs/api-reference/chat/object, `message.annotations`;
  https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat). They may come
  in a chunk of their own, after the text they cite.
- OpenRouter normalizes every search, whichever engine ran it, to the same schema and
  adds the page's `content` (https://openrouter.ai/docs/guides/features/plugins/web-search,
  "Parsing web search results"); its chunks carry the serving `provider` and its usage
  carries `cost`. Its `openrouter:web_search` server tool cites the same way
  (https://openrouter.ai/docs/guides/features/server-tools/web-search) and counts its
  searches in the usage (`web_search_requests`, documented under `server_tool_use`; the
  recorded corpus stream openrouter/server_tool_advisor.sse carries the server tools'
  counters under `server_tool_use_details`): `with_server_tool_usage`.
"""

from __future__ import annotations

from typing import Any

from tests.support.data_openai import chunk, usage_chunk


def citation(url: str, title: str | None, start: int = 0, end: int = 0, **extra: Any) -> dict[str, Any]:
    inner: dict[str, Any] = {"url": url, "start_index": start, "end_index": end, **extra}
    if title is not None:
        inner["title"] = title
    return {"type": "url_citation", "url_citation": inner}


NEWS = "https://news.example.org/2026/rates"
BANK = "https://bank.example.com/press/decision"
WIKI = "https://en.wikipedia.org/wiki/Interest_rate"

# What both streams show, and the pages they cite, in the order they cite them.
ANSWER = f"Rates held at 4% ([news.example.org]({NEWS})); the bank explained why ([bank.example.com]({BANK}))."
CITED = [(NEWS, "Central bank holds rates"), (BANK, "Monetary policy decision"), (WIKI, "Interest rate")]

# OpenRouter with a search (the `web` plugin or the server tool): the citations ride on
# content chunks and on the finish chunk; the usage chunk repeats a choice (as OpenRouter's
# recordings do).
OPENROUTER_CITED = [
    chunk({"role": "assistant", "content": ""}, provider="OpenAI"),
    chunk({"content": ANSWER[:40]}, provider="OpenAI"),
    chunk({"content": ANSWER[40:70], "annotations": [citation(NEWS, CITED[0][1], 20, 60, content="Rates held.")]},
          provider="OpenAI"),
    chunk({"content": ANSWER[70:]}, provider="OpenAI"),
    chunk({"content": "", "annotations": [citation(BANK, CITED[1][1], 70, 110, content="Why."),
                                          citation(WIKI, CITED[2][1], 0, 0)]}, "stop", provider="OpenAI"),
    chunk({"content": ""}, "stop", provider="OpenAI",
          usage={"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150, "cost": 0.02}),
]

# An OpenAI search model: text first, then the citations in a chunk of their own, then the
# finish and a usage chunk with no choices.
OPENAI_CITED = [
    chunk({"role": "assistant", "content": "", "refusal": None}),
    chunk({"content": ANSWER[:50]}),
    chunk({"content": ANSWER[50:]}),
    chunk({"annotations": [citation(NEWS, CITED[0][1], 20, 60), citation(BANK, CITED[1][1], 70, 110),
                           citation(WIKI, CITED[2][1])]}),
    chunk({}, "stop"),
    usage_chunk(80, 25),
]


def with_server_tool_usage(events: list[dict[str, Any]], searches: int,
                           field: str = "server_tool_use_details") -> list[dict[str, Any]]:
    """The same events with the server tool's counters in the last event's usage: `searches`
    web searches, each a server tool call requested and executed."""
    *head, last = events
    counters = {"tool_calls_requested": searches, "tool_calls_executed": searches,
                "web_search_requests": searches}
    return [*head, {**last, "usage": {**last["usage"], field: counters}}]


def without_annotations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same events with every `annotations` field taken out (what the text must not depend on)."""
    out = []
    for event in events:
        choices = [{**c, "delta": {k: v for k, v in c["delta"].items() if k != "annotations"}}
                   for c in event["choices"]]
        out.append({**event, "choices": choices})
    return out


def with_annotations(annotations: Any) -> list[dict[str, Any]]:
    """A short answer whose middle chunk carries `annotations` as given (any JSON value)."""
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Grounded "}),
        chunk({"content": "answer.", "annotations": annotations}),
        chunk({"annotations": annotations}),
        chunk({}, "stop"),
        usage_chunk(5, 3),
    ]
