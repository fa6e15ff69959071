"""Anthropic Messages stream events -> ProcessedChunk.

Pure: `process_event` reads one decoded event and the per-stream `AnthropicStream`
that `start_stream` created, and returns what that event completes. Nothing here does
I/O, reads a clock or keeps module state.

Choices:
- `stop_reason: "refusal"` (the streaming safety classifiers intervened) is a
  `content_blocked` error after the text already delivered, like Gemini's SAFETY.
- Only `tool_use` blocks become calls. `server_tool_use` / `mcp_tool_use` blocks ran on
  Anthropic's side and their results are already in the response; dispatching them
  here would run them twice.
- A call's arguments are exactly the concatenated `partial_json` pieces, emitted at its
  `content_block_stop`; a stream cut before that stop never yields the call.
- Text blocks with another block between them (text, a search, more text) are separate
  paragraphs of the answer, so the later one starts with a blank line. Text blocks that
  follow each other directly are one run of prose: Anthropic splits an answer's text into
  blocks at each citation ("the grass is green" cited, then " and " uncited, ...:
  https://platform.claude.com/docs/en/build-with-claude/citations), so they join as sent.
- Signed thinking and redacted-thinking blocks are kept (signature and opaque `data`
  untouched) in `provider_fields` of the first call that follows them, so the tool
  loop replays them ahead of that call; the redacted data is never decoded and never
  logged (its log entry has empty text).
- Usage is reported in message_start and again in message_delta; the fields are merged
  and converted once, at message_stop, with the stop reason (`anthropic_usage`,
  FINISH_REASONS), the web searches the API ran included
  (`usage.server_tool_use.web_search_requests` -> `Usage.searches`).
- Web search (https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool):
  a `server_tool_use` block named `web_search` streams its input as `input_json_delta`
  pieces; its `query` is kept at the block's stop (`_SearchLog.query`), in order, for the
  done chunk's `searches`, unless its `web_search_tool_result` is an error
  (`web_search_tool_result_error`: max uses exceeded, unavailable, ...): that search did
  not run, and the answer goes on without it. The results' titles are kept by URL. A text
  block's `citations_delta` with a `web_search_result_location` adds its URL to the done
  chunk's `sources`, in the order the citations arrive (repeats kept: the stream layer
  keeps each URL once); a citation without a title takes its result's. Only what the
  answer cites is a source: results it did not cite are pages it read, not pages it is
  grounded on, so a search without citations gives `sources` None. A citation or result
  that is not what the docs show (not an object, no URL) is left out, never a failure:
  sources decorate an answer that is otherwise whole. Other citation kinds (documents,
  search_result blocks) are not web sources and are ignored.
- `stop_reason: "pause_turn"`: the API paused a long server-tool turn (searches) before
  the answer was complete. Resuming means sending the paused content back, server tool
  blocks included, which the bot does not keep (and the API has refused such a replay
  when a search was left without its result: anthropics/anthropic-sdk-python#1339). So
  the answer ends here, finish reason `other`: a done chunk, never an error, what was
  written stays with the sources and searches so far. Not `length`: that offers Continue,
  whose prefill would carry none of the search results, and a pause may come before any
  text at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from providers.anthropic_native.request import THINKING_BLOCKS, WEB_SEARCH_TOOL_NAME
from providers.done_report import (
    count,
    done_chunk,
    finish_reason_of,
    merge_report,
    sum_reported,
    usage_of,
)
from providers.errors import STREAM_INTERRUPTED, classify_error_body, classify_failure
from providers.sdk_adapter import END_OF_BODY
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

PROVIDER = "anthropic"
FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "pause_turn": "other",  # a paused search turn: ended, not failed (module doc)
}


@dataclass(slots=True)
class _Block:
    kind: str
    id: str | None = None
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    signature: str = ""
    data: str | None = None
    start_input: dict[str, Any] | None = None


@dataclass(slots=True)
class _SearchLog:
    """What the response's web searches left: the queries, the results' titles and the
    citations, each in stream order."""

    queries: list[tuple[str | None, str]] = field(default_factory=list)  # (server tool id, query)
    failed: set[str] = field(default_factory=set)  # server tool ids whose result was an error
    titles: dict[str, str] = field(default_factory=dict)  # result URL -> title
    cited: list[tuple[str, str | None]] = field(default_factory=list)  # (URL, title)

    def query(self, block: _Block) -> None:
        """A finished `web_search` server tool block: its query, when its input has one."""
        raw = "".join(block.pieces)
        try:
            given = json.loads(raw) if raw.strip() else block.start_input
        except (ValueError, RecursionError):
            return  # the API's own input, cut or garbled: no query to show
        query = given.get("query") if isinstance(given, dict) else None
        if isinstance(query, str) and query.strip():
            self.queries.append((block.id, query.strip()))

    def result(self, block: dict[str, Any]) -> None:
        """A `web_search_tool_result` block: a list of results, or an error object."""
        content = block.get("content")
        if isinstance(content, dict):  # {"type": "web_search_tool_result_error", "error_code": ...}
            ident = block.get("tool_use_id")
            if isinstance(ident, str):
                self.failed.add(ident)
            return
        for item in content if isinstance(content, list) else ():
            if isinstance(item, dict) and item.get("type") == "web_search_result":
                url, title = item.get("url"), item.get("title")
                if isinstance(url, str) and url and isinstance(title, str) and title:
                    self.titles.setdefault(url, title)

    def citation(self, citation: Any) -> None:
        """One citation of a text block; only web search results are web sources."""
        if not isinstance(citation, dict) or citation.get("type") != "web_search_result_location":
            return
        url, title = citation.get("url"), citation.get("title")
        if isinstance(url, str) and url:
            self.cited.append((url, title if isinstance(title, str) and title else None))

    def sources(self) -> list[Source] | None:
        if not self.cited:
            return None
        return [Source(url, title or self.titles.get(url)) for url, title in self.cited]

    def searches(self) -> list[str] | None:
        done = [query for ident, query in self.queries if ident is None or ident not in self.failed]
        return done or None


@dataclass(slots=True)
class AnthropicStream:
    """Everything one stream needs across events; made fresh by every start_stream."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    # Thinking blocks not yet attached to a call, and the last signature seen.
    thinking_blocks: list[dict[str, Any]] = field(default_factory=list)
    signature: str | None = None
    # Usage fields of message_start and message_delta merged, converted once at the end.
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    calls: int = 0
    finished: bool = False
    # Visible text already went out; the next text block starts a new paragraph, unless
    # it directly follows a text block (`in_text`: the last block started was text).
    wrote_text: bool = False
    separate_next: bool = False
    in_text: bool = False
    search: _SearchLog = field(default_factory=_SearchLog)


def _text(content: str, thoughts: list[ThoughtLogEntry] | None = None) -> ProcessedChunk:
    return ProcessedChunk(type="text", content=content, thoughts=thoughts)


def _thought(kind: str, text: str) -> ProcessedChunk:
    return _text("", [ThoughtLogEntry(kind, text, PROVIDER)])  # type: ignore[arg-type]


def malformed(detail: str) -> ProcessedChunk:
    """A stream that broke the wire format: not retryable, like any unclassified failure."""
    error = classify_failure(provider=PROVIDER, message=f"malformed Anthropic stream: {detail}")
    return ProcessedChunk(type="error", error=error)


def interrupted(detail: str) -> ProviderError:
    return classify_failure(
        provider=PROVIDER, message=f"Anthropic stream interrupted: {detail}",
        error_type=STREAM_INTERRUPTED,
    )


def anthropic_usage(usage: dict[str, Any]) -> Usage | None:
    """Anthropic's usage object → `Usage`.

    Anthropic counts cache writes and cache reads apart from `input_tokens`; all three
    were sent to the model, so the input is their sum and the cached part is the reads.
    `output_tokens` already includes thinking; no separate reasoning count is reported.
    The web searches it ran are `Usage.searches`.
    """
    cache_read = count(usage.get("cache_read_input_tokens"))
    input_tokens = sum_reported(
        count(usage.get("input_tokens")), count(usage.get("cache_creation_input_tokens")), cache_read
    )
    converted = usage_of(input_tokens, count(usage.get("output_tokens")), cached_input_tokens=cache_read)
    # The searches the API ran (`server_tool_use.web_search_requests`). Anthropic reports
    # 0 on responses that did not search (seen in recorded streams with other server
    # tools); like every family that reports nothing then, that is None: no search ran.
    server_tools = usage.get("server_tool_use")
    searches = count(server_tools.get("web_search_requests")) if isinstance(server_tools, dict) else None
    if not searches or searches < 0:
        return converted
    return replace(converted or Usage(), searches=searches)


def _visible(state: AnthropicStream, text: str) -> list[ProcessedChunk]:
    """Text blocks are separate paragraphs in the message; keep them apart when joined."""
    if not text:
        return []
    if state.separate_next:
        state.separate_next = False
        text = "\n\n" + text
    state.wrote_text = True
    return [_text(text)]


def _start_block(state: AnthropicStream, index: int, block: dict[str, Any]) -> list[ProcessedChunk]:
    kind = block.get("type")
    if kind == "text":
        state.blocks[index] = _Block("text")
        if not state.in_text:
            state.separate_next = state.wrote_text
        state.in_text = True
        citations = block.get("citations")
        for citation in citations if isinstance(citations, list) else ():
            state.search.citation(citation)
        text = block.get("text")
        return _visible(state, text) if isinstance(text, str) else []
    state.in_text = False
    if kind == "thinking":
        entry = _Block("thinking")
        state.blocks[index] = entry
        text = block.get("thinking")
        if isinstance(text, str) and text:
            entry.pieces.append(text)
            return [_thought("raw", text)]
        return []
    if kind == "redacted_thinking":
        data = block.get("data")
        state.blocks[index] = _Block("redacted_thinking", data=data if isinstance(data, str) else "")
        return [_thought("redacted", "")]
    if kind == "tool_use":
        ident = block.get("id")
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("tool_use block without a name")
        start_input = block.get("input")
        state.blocks[index] = _Block(
            "tool_use", id=ident if isinstance(ident, str) else None, name=name,
            start_input=start_input if isinstance(start_input, dict) and start_input else None,
        )
        return []
    if kind == "server_tool_use":
        ident, name, start_input = block.get("id"), block.get("name"), block.get("input")
        state.blocks[index] = _Block(
            "server_tool_use", id=ident if isinstance(ident, str) else None,
            name=name if isinstance(name, str) else "",
            start_input=start_input if isinstance(start_input, dict) else None,
        )
        return []
    if kind == "web_search_tool_result":
        state.search.result(block)
    state.blocks[index] = _Block("other")
    return []


def _delta(state: AnthropicStream, index: int, delta: dict[str, Any]) -> list[ProcessedChunk]:
    block = state.blocks.get(index)
    kind = delta.get("type")
    if kind == "text_delta":
        text = delta["text"]
        if not isinstance(text, str):
            raise ValueError("text_delta without text")
        return _visible(state, text)
    if block is None:
        raise ValueError(f"delta for unknown block {index}")
    if kind == "thinking_delta":
        text = delta["thinking"]
        if not isinstance(text, str):
            raise ValueError("thinking_delta without text")
        if not text:
            return []
        block.pieces.append(text)
        return [_thought("raw", text)]
    if kind == "signature_delta":
        signature = delta["signature"]
        if not isinstance(signature, str):
            raise ValueError("signature_delta without a signature")
        block.signature += signature
        return [_thought("signature", signature)]
    if kind == "input_json_delta":
        piece = delta["partial_json"]
        if not isinstance(piece, str):
            raise ValueError("input_json_delta without partial_json")
        if block.kind in ("tool_use", "server_tool_use"):
            block.pieces.append(piece)
        return []
    if kind == "citations_delta":
        state.search.citation(delta.get("citation"))
        return []
    return []


def _finish_call(state: AnthropicStream, block: _Block) -> ProcessedChunk:
    raw = "".join(block.pieces)
    fields: dict[str, Any] = {}
    if state.thinking_blocks:
        # The thinking that led to this call (interleaved thinking may precede each call).
        fields[THINKING_BLOCKS] = state.thinking_blocks
        state.signature = next(
            (b["signature"] for b in reversed(state.thinking_blocks) if b.get("signature")),
            state.signature,
        )
        state.thinking_blocks = []
    signature = state.signature
    state.calls += 1
    if raw.strip():
        parsed = parse_tool_arguments(raw, adapter=PROVIDER, tool_name=block.name)
        args, truncated = parsed.args, parsed.truncated
        if not parsed.parsed and not truncated:
            fields["unparsed_arguments"] = raw
    else:
        # No input deltas: the input given whole at block start (empty for the API itself).
        args, truncated = dict(block.start_input or {}), False
    call = FunctionCall(
        name=block.name, args=args, id=block.id, thought_signature=signature,
        provider_fields=fields, arguments_truncated=truncated,
    )
    return ProcessedChunk(type="function_call", function_call=call)


def _stop_block(state: AnthropicStream, index: int) -> list[ProcessedChunk]:
    block = state.blocks.pop(index, None)
    if block is None:
        return []
    if block.kind == "thinking":
        state.thinking_blocks.append(
            {"type": "thinking", "thinking": "".join(block.pieces), "signature": block.signature}
        )
    elif block.kind == "redacted_thinking":
        state.thinking_blocks.append({"type": "redacted_thinking", "data": block.data or ""})
    elif block.kind == "tool_use":
        return [_finish_call(state, block)]
    elif block.kind == "server_tool_use" and block.name == WEB_SEARCH_TOOL_NAME:
        state.search.query(block)  # ran on Anthropic's side: a search, never a call
    return []


def _refused(state: AnthropicStream) -> ProcessedChunk:
    """`stop_reason: "refusal"`: Anthropic's safety classifiers stopped the answer."""
    error = classify_failure(
        provider=PROVIDER, message="Anthropic's safety system stopped the response (refusal)",
        code="refusal", error_type="content_blocked", details={"usage": dict(state.usage)},
    )
    return ProcessedChunk(type="error", error=error)


def _done(state: AnthropicStream) -> ProcessedChunk:
    reason = finish_reason_of(state.stop_reason, FINISH_REASONS, made_calls=state.calls > 0)
    done = done_chunk(reason, anthropic_usage(state.usage))
    done.sources, done.searches = state.search.sources(), state.search.searches()
    return done


def _index(payload: dict[str, Any]) -> int:
    index = payload["index"]
    if not isinstance(index, int) or isinstance(index, bool):
        raise ValueError("block index is not an integer")
    return index


def _dispatch(state: AnthropicStream, kind: str, payload: dict[str, Any]) -> list[ProcessedChunk]:
    if kind == "content_block_delta":
        delta = payload["delta"]
        if not isinstance(delta, dict):
            raise ValueError("delta is not an object")
        return _delta(state, _index(payload), delta)
    if kind == "content_block_start":
        block = payload["content_block"]
        if not isinstance(block, dict):
            raise ValueError("content_block is not an object")
        return _start_block(state, _index(payload), block)
    if kind == "content_block_stop":
        return _stop_block(state, _index(payload))
    if kind == "message_start":
        message = payload["message"]
        if not isinstance(message, dict):
            raise ValueError("message is not an object")
        merge_report(state.usage, message.get("usage"))
        return []
    if kind == "message_delta":
        delta = payload.get("delta") or {}
        if not isinstance(delta, dict):
            raise ValueError("message delta is not an object")
        if delta.get("stop_reason") is not None:
            state.stop_reason = delta["stop_reason"]
        merge_report(state.usage, payload.get("usage"))
        if state.stop_reason == "refusal":
            return [_refused(state)]
        return []
    if kind == "message_stop":
        state.finished = True
        return [_done(state)]
    if kind == "error":
        return [ProcessedChunk(type="error", error=classify_error_body(provider=PROVIDER, body=payload))]
    return []  # ping and event types this version does not know


def process_event(state: AnthropicStream, event: str | None, payload: Any) -> list[ProcessedChunk]:
    """Normalize one decoded SSE event (`payload` is its parsed data).

    After message_stop the answer is complete and `done` went out: whatever the body
    still holds is not part of it and yields nothing.
    """
    if state.finished:
        return []
    if event == END_OF_BODY:
        return [ProcessedChunk(type="error", error=interrupted("the body ended before message_stop"))]
    if not isinstance(payload, dict):
        return [malformed(f"event {event!r} data is not a JSON object")]
    kind = payload.get("type")
    if event == "error" or kind == "error":
        kind = "error"
    if not isinstance(kind, str):
        return [malformed(f"event {event!r} has no type")]
    try:
        return _dispatch(state, kind, payload)
    except (KeyError, TypeError, ValueError) as exc:
        return [malformed(f"{kind}: {exc.__class__.__name__} {exc}")]
