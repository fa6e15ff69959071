"""Responses API stream events → ProcessedChunks (pure).

`ResponsesStream` is everything one stream remembers; `process_event` is a function of
it and one SSE event, parsed with jiter into plain dicts (a typed SDK object per event is
what makes the SDK's own iteration several times slower than the bytes). Reasoning
arrives apart from the answer on this API, so no think-tag guard runs here.

What each event gives (OpenAI's streaming events reference; the shapes checked against
recorded streams in tests/fixtures/openai_responses):

- `response.output_text.delta`, `response.refusal.delta`: visible text. Two message items
  (a `commentary` phase, then the `final_answer`) are two paragraphs.
- `response.reasoning_summary_text.delta`: the reasoning summary (thoughts, kind
  "summary"); its parts are paragraphs. `response.reasoning_text.delta`: raw reasoning
  (the open gpt-oss models).
- `response.output_item.done`: a finished item. A `function_call` becomes a
  `FunctionCall` (id = its `call_id`), carrying in `provider_fields` the reasoning items
  that came right before it, whole with their `encrypted_content`, for the stateless
  replay (`request.REASONING_ITEMS`). Reasoning that led to a message or a search is not
  replayed. A `web_search_call` whose action searched gives its query to the done chunk's
  `searches`; opening or searching within a page is not a search.
- `response.output_text.annotation.added`: a `url_citation` adds its page to `sources`.
- `response.completed`: the done chunk ("stop", or "tool_calls" when calls were made);
  `response.incomplete`: the same, ended by the output cap ("length", so Continue is
  offered), a content filter ("content_filter") or anything else ("other").
- `error` and `response.failed`: the provider's error, classified like the same body on
  the HTTP path (`providers/errors.py`). A body that ends before any of these terminal
  events was interrupted; input that breaks the wire format is a malformed stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import jiter

from providers.done_report import count, done_chunk, finish_reason_of, usage_of
from providers.errors import (
    STREAM_INTERRUPTED,
    classify_failure,
    classify_stream_error,
)
from providers.openai_responses.request import REASONING_ITEMS
from providers.streaming import END_OF_BODY, SSEEvent
from providers.text.json_repair import parse_tool_arguments
from providers.types import (
    FinishReason,
    FunctionCall,
    ProcessedChunk,
    ProviderError,
    Source,
    ThoughtLogEntry,
    Usage,
)

INCOMPLETE_REASONS: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}
COMPLETED: dict[str, FinishReason] = {"completed": "stop"}
PARAGRAPH = "\n\n"


@dataclass(slots=True)
class ResponsesStream:
    """Per-stream state, created by `start_stream`; never shared between streams."""

    provider: str
    # Reasoning items finished since the last other item: replayed before the next call.
    reasoning: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    ended: bool = False
    wrote_text: bool = False
    separate_text: bool = False  # the next visible text opens a new paragraph
    wrote_summary: bool = False
    separate_summary: bool = False  # the next summary text opens a new paragraph
    queries: list[str] = field(default_factory=list)
    searched: int = 0  # web_search_call items whose action was a search
    sources: list[Source] = field(default_factory=list)


def new_stream(provider: str) -> ResponsesStream:
    return ResponsesStream(provider=provider)


# ---- errors ------------------------------------------------------------------------------------
def _error(state: ResponsesStream, err: ProviderError) -> list[ProcessedChunk]:
    state.ended = True
    return [ProcessedChunk(type="error", error=err)]


def _malformed(state: ResponsesStream, why: str, data: bytes = b"") -> list[ProcessedChunk]:
    err = classify_failure(provider=state.provider, message=f"malformed stream: {why}",
                           error_type="malformed_stream",
                           original_error=data[:500].decode("utf-8", "replace"))
    return _error(state, err)


def interrupted(state: ResponsesStream, message: str) -> list[ProcessedChunk]:
    err = classify_failure(provider=state.provider, message=message, error_type=STREAM_INTERRUPTED)
    return _error(state, err)


def fail(state: ResponsesStream, err: ProviderError) -> list[ProcessedChunk]:
    """A failure outside the body (transport reset, inactivity timeout). Nothing is held
    back on this API, so only the error follows what was already delivered."""
    return [] if state.ended else _error(state, err)


def _provider_error(state: ResponsesStream, body: Any) -> list[ProcessedChunk]:
    """An error the provider reported in the stream: the in-stream `error` event (flat,
    `{"type": "error", "code", "message", "param"}`, or with the error nested under
    `error`), or `response.failed`'s `response.error`; classified like the same body on
    the HTTP path."""
    if isinstance(body, dict) and not isinstance(body.get("error"), dict):
        body = {"error": {key: value for key, value in body.items() if key not in ("type", "sequence_number")}}
    return _error(state, classify_stream_error(provider=state.provider, body=body))


# ---- text and thoughts ---------------------------------------------------------------------------
def _delta(payload: dict) -> str:
    delta = payload.get("delta")
    if not isinstance(delta, str):
        raise ValueError(f"{payload.get('type')} delta is not a string")
    return delta


def _text(state: ResponsesStream, text: str) -> list[ProcessedChunk]:
    if not text:
        return []
    if state.separate_text:
        state.separate_text = False
        text = PARAGRAPH + text
    state.wrote_text = True
    return [ProcessedChunk(type="text", content=text)]


def _thought(state: ResponsesStream, kind: str, text: str) -> list[ProcessedChunk]:
    if not text:
        return []
    if kind == "summary":
        if state.separate_summary:
            state.separate_summary = False
            text = PARAGRAPH + text
        state.wrote_summary = True
    entry = ThoughtLogEntry(kind, text, state.provider)  # type: ignore[arg-type]
    return [ProcessedChunk(type="text", content="", thoughts=[entry])]


# ---- items ------------------------------------------------------------------------------------------
def _replayable(item: dict) -> dict[str, Any] | None:
    """A reasoning item as the next request sends it back, or None when it cannot be: without
    its `encrypted_content` the API could only look it up in storage, which `store: false`
    leaves empty."""
    encrypted = item.get("encrypted_content")
    ident = item.get("id")
    if not isinstance(encrypted, str) or not encrypted or not isinstance(ident, str):
        return None
    summary = item.get("summary")
    parts = [{"type": "summary_text", "text": part["text"]} for part in summary
             if isinstance(part, dict) and isinstance(part.get("text"), str)] if isinstance(summary, list) else []
    return {"type": "reasoning", "id": ident, "summary": parts, "encrypted_content": encrypted}


def _function_call(state: ResponsesStream, item: dict) -> list[ProcessedChunk]:
    name, ident, arguments = item.get("name"), item.get("call_id"), item.get("arguments")
    if not isinstance(name, str) or not name:
        raise ValueError("function_call without a name")
    if not isinstance(ident, str) or not ident:
        raise ValueError("function_call without a call_id")
    if not isinstance(arguments, str):
        raise ValueError("function_call arguments are not a string")
    parsed = parse_tool_arguments(arguments, adapter=state.provider, tool_name=name)
    fields: dict[str, Any] = {}
    if state.reasoning:
        fields[REASONING_ITEMS], state.reasoning = state.reasoning, []
    state.calls += 1
    call = FunctionCall(name=name, args=parsed.args, id=ident, provider_fields=fields,
                        arguments_truncated=parsed.truncated)
    return [ProcessedChunk(type="function_call", function_call=call)]


def _web_search(state: ResponsesStream, item: dict) -> None:
    action = item.get("action")
    if not isinstance(action, dict) or action.get("type") != "search":
        return  # opening a page or finding in one is not a search
    state.searched += 1
    query = action.get("query")
    if isinstance(query, str) and query.strip():
        state.queries.append(query.strip())


def _item_added(state: ResponsesStream, payload: dict) -> list[ProcessedChunk]:
    item = payload.get("item")
    if not isinstance(item, dict):
        raise ValueError("output item is not an object")
    if item.get("type") == "message" and state.wrote_text:
        state.separate_text = True
    return []


def _item_done(state: ResponsesStream, payload: dict) -> list[ProcessedChunk]:
    item = payload.get("item")
    if not isinstance(item, dict):
        raise ValueError("output item is not an object")
    kind = item.get("type")
    if kind == "reasoning":
        kept = _replayable(item)
        if kept is not None:
            state.reasoning.append(kept)
        return []
    if kind == "function_call":
        return _function_call(state, item)
    state.reasoning = []  # it led to this item (a message, a search), not to a call
    if kind == "web_search_call":
        _web_search(state, item)
    return []


def _annotation(state: ResponsesStream, payload: dict) -> None:
    """A `url_citation` annotation (flat on this API: `{"type", "url", "title",
    "start_index", "end_index"}`). A citation decorates an answer that is whole without
    it, so one that does not fit (another type, no http(s) URL) is left out, never a
    failure; a title that is not text is dropped."""
    annotation = payload.get("annotation")
    if not isinstance(annotation, dict) or annotation.get("type") != "url_citation":
        return
    url = annotation.get("url")
    if not isinstance(url, str) or not url.strip().lower().startswith(("https://", "http://")):
        return
    title = annotation.get("title")
    state.sources.append(Source(url.strip(), title.strip() if isinstance(title, str) and title.strip() else None))


# ---- the end ------------------------------------------------------------------------------------------
def _detail(usage: dict, details: str, name: str) -> int | None:
    inner = usage.get(details)
    return count(inner.get(name)) if isinstance(inner, dict) else None


def responses_usage(response: dict, searched: int) -> Usage | None:
    """The response's `usage` → `Usage`: `output_tokens` already counts the reasoning
    tokens and `input_tokens` the cached ones, as `Usage` wants. The searches are the
    provider's own count of billable ones (`tool_usage.web_search.num_requests`) where
    it reports one, else the search actions the stream carried; none is None."""
    usage = response.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    converted = usage_of(count(usage.get("input_tokens")), count(usage.get("output_tokens")),
                         reasoning_tokens=_detail(usage, "output_tokens_details", "reasoning_tokens"),
                         cached_input_tokens=_detail(usage, "input_tokens_details", "cached_tokens"),
                         total_tokens=count(usage.get("total_tokens")))
    tools = response.get("tool_usage")
    reported = _detail(tools, "web_search", "num_requests") if isinstance(tools, dict) else None
    searches = reported if reported is not None else searched
    if not searches or searches < 0:
        return converted
    return replace(converted or Usage(), searches=searches)


def _done(state: ResponsesStream, payload: dict) -> list[ProcessedChunk]:
    response = payload.get("response")
    if not isinstance(response, dict):
        raise ValueError("terminal event without a response object")
    if payload.get("type") == "response.incomplete":
        details = response.get("incomplete_details")
        native = details.get("reason") if isinstance(details, dict) else None
        reason: FinishReason | None = INCOMPLETE_REASONS.get(native, "other") if isinstance(native, str) else "other"
    else:
        reason = finish_reason_of("completed", COMPLETED, made_calls=state.calls > 0)
    state.ended = True
    done = done_chunk(reason, responses_usage(response, state.searched))
    done.sources = list(state.sources) or None
    done.searches = list(state.queries) or None
    return [done]


def _failed(state: ResponsesStream, payload: dict) -> list[ProcessedChunk]:
    response = payload.get("response")
    error = response.get("error") if isinstance(response, dict) else None
    if not isinstance(error, dict):
        error = {"message": "the provider reported the response failed", "code": None}
    return _provider_error(state, {"error": error})


# ---- the event ------------------------------------------------------------------------------------
def _dispatch(state: ResponsesStream, kind: str, payload: dict) -> list[ProcessedChunk]:
    if kind == "response.output_text.delta" or kind == "response.refusal.delta":
        return _text(state, _delta(payload))
    if kind == "response.reasoning_summary_text.delta":
        return _thought(state, "summary", _delta(payload))
    if kind == "response.reasoning_text.delta":
        return _thought(state, "raw", _delta(payload))
    if kind == "response.reasoning_summary_part.added":
        state.separate_summary = state.wrote_summary
        return []
    if kind == "response.output_item.added":
        return _item_added(state, payload)
    if kind == "response.output_item.done":
        return _item_done(state, payload)
    if kind == "response.output_text.annotation.added":
        _annotation(state, payload)
        return []
    if kind == "response.completed" or kind == "response.incomplete":
        return _done(state, payload)
    if kind == "response.failed":
        return _failed(state, payload)
    if kind == "error":
        return _provider_error(state, payload)
    return []  # lifecycle, argument pieces, tool progress, and event types this version does not know


def process_event(state: ResponsesStream, event: SSEEvent) -> list[ProcessedChunk]:
    """One SSE event → zero or more chunks. Never raises on provider input; after the
    stream ended (done or an error) nothing the body still holds is part of the answer."""
    if state.ended:
        return []
    if event is END_OF_BODY:
        return interrupted(state, "the stream ended before the provider finished the answer")
    name, data = event
    if not data.strip():
        return []  # an event name without data (its data line was cut) carries nothing
    if data == b"[DONE]":  # some servers end every stream so; only a terminal event ends it well
        return interrupted(state, "the stream ended before the provider finished the answer")
    try:
        payload = jiter.from_json(data)
    except ValueError as exc:
        return _malformed(state, f"event is not JSON ({exc})", data)
    if not isinstance(payload, dict):
        return _malformed(state, "event is not a JSON object", data)
    kind = payload.get("type", name)
    if not isinstance(kind, str):
        return _malformed(state, "event has no type", data)
    try:
        return _dispatch(state, kind, payload)
    except ValueError as exc:
        return _malformed(state, str(exc), data)
