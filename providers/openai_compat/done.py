"""What the OpenAI family's `done` chunk reports: its usage object and finish reasons in
the contract's vocabulary (the rules every family shares are in `providers/done_report.py`).

The stream merges the usage reports it sees (`merge_report`); `openai_usage` converts
the merged fields once, at the end.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from providers.done_report import count, usage_of
from providers.types import FinishReason, Usage

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # the deprecated single-function form
    "content_filter": "content_filter",
}


def _detail(usage: dict[str, Any], details: str, name: str) -> int | None:
    inner = usage.get(details)
    return count(inner.get(name)) if isinstance(inner, dict) else None


# Where OpenRouter reports the searches its server tools ran: its API reference names the
# usage object's `server_tool_use` (`web_search_requests`: "Number of web searches performed
# by server-side tools"), and chat-completions streams carry the same counters under
# `server_tool_use_details` (the recorded openrouter/server_tool_advisor.sse of the corpus).
SERVER_TOOL_USAGE = ("server_tool_use_details", "server_tool_use")


def reported_searches(usage: dict[str, Any]) -> int | None:
    """The web searches the usage object reports; None when it reports none."""
    for key in SERVER_TOOL_USAGE:
        inner = usage.get(key)
        found = count(inner.get("web_search_requests")) if isinstance(inner, dict) else None
        if found is not None:
            return found
    return None


def openai_usage(usage: dict[str, Any]) -> Usage | None:
    """The family's usage object → `Usage`.

    `completion_tokens` already counts the reasoning tokens and `prompt_tokens` the
    cached ones, as `Usage` wants. DeepSeek reports its cache hits as
    `prompt_cache_hit_tokens` (newer responses also as `prompt_tokens_details`).
    """
    cached = _detail(usage, "prompt_tokens_details", "cached_tokens")
    if cached is None:
        cached = count(usage.get("prompt_cache_hit_tokens"))
    return usage_of(
        count(usage.get("prompt_tokens")), count(usage.get("completion_tokens")),
        reasoning_tokens=_detail(usage, "completion_tokens_details", "reasoning_tokens"),
        cached_input_tokens=cached, total_tokens=count(usage.get("total_tokens")),
    )


def searched_usage(fields: dict[str, Any], searched: bool, *, once: bool, cited: bool) -> Usage | None:
    """The stream's usage (`fields`, merged), with the searches the request's native search made.

    What OpenRouter's usage reports (`web_search_requests`, `reported_searches`) is the
    count. Without a report: the `web` plugin (`once`) searched once (it runs once per
    request); the server tool, which the model calls 0 to N times, searched at least once
    when the answer cites pages (`cited`: `url_citation`s), and is not counted otherwise
    (nothing says it searched)."""
    usage = openai_usage(fields)
    if not searched:
        return usage
    searches = reported_searches(fields)
    if searches is None and (once or cited):
        searches = 1
    return usage if searches is None else replace(usage or Usage(), searches=searches)
