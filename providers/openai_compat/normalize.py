"""Chat-completions stream events → ProcessedChunks.

`StreamState` is everything one stream needs to remember (guards, partial tool calls,
reasoning to replay, usage, the pages the answer cites); `process_event` is a pure
function of that state and one SSE event. Usage (usually in the last chunk), the finish
reason and the cited pages are converted once, into the `done` chunk
(`providers/openai_compat/done.py`). The per-event path parses with
jiter and touches only plain dicts: a typed object per chunk is what makes the SDK's own
iteration ~20x slower than the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jiter

from providers.done_report import done_chunk, finish_reason_of, merge_report
from providers.errors import (
    STREAM_INTERRUPTED,
    classify_failure,
    classify_stream_error,
)
from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities
from providers.openai_compat.capabilities import replays_streamed_reasoning
from providers.openai_compat.citations import url_citations
from providers.openai_compat.done import FINISH_REASONS, searched_usage
from providers.openai_compat.request import REASONING_CONTENT, REASONING_DETAILS
from providers.openai_compat.tool_calls import PartialCall, accumulate_calls
from providers.streaming import END_OF_BODY, SSEEvent
from providers.text.json_repair import parse_tool_arguments
from providers.text.reasoning_tags import find_trailing_tag_prefix
from providers.text.spill_guard import ReasoningContentSpillGuard
from providers.text.think_stripper import ThinkBlockContentStripper
from providers.text.verbatim_tool_calls import VerbatimToolCallParser
from providers.types import (
    ChatRequest,
    FunctionCall,
    ProcessedChunk,
    ProviderError,
    Source,
    ThoughtLogEntry,
)


@dataclass(slots=True)
class StreamState:
    """Per-stream state, created by `start_stream`; never shared between streams."""

    provider: str
    stripper: ThinkBlockContentStripper
    spill: ReasoningContentSpillGuard
    verbatim: VerbatimToolCallParser | None = None
    calls: dict[int, PartialCall] = field(default_factory=dict)
    reasoning_details: list[dict[str, Any]] = field(default_factory=list)
    reasoning_for_replay: list[str] = field(default_factory=list)
    serving_provider: str | None = None
    # The provider's own finish reason and usage fields, converted once by `_done`.
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    made_calls: bool = False
    pending_flush: bool = False
    verbatim_count: int = 0
    ended: bool = False
    # The pages the answer cites (`url_citation` annotations), in the order they came.
    sources: list[Source] = field(default_factory=list)
    # The request carried the provider's own search field (`request.searches_here`).
    searched: bool = False
    # That search runs once per request (OpenRouter's `web` plugin) rather than when the
    # model decides (its `openrouter:web_search` server tool).
    searches_once: bool = False
    # Calls carry their reasoning back (`reasoning_content`): the model requires it
    # (`ModelCapabilities.replays_reasoning`) or the stream carried the field (not on OpenRouter).
    replays_reasoning: bool = False
    # The field in the stream makes its calls carry it back (`replays_streamed_reasoning`).
    learns_replay: bool = False


def new_stream_state(capabilities: ModelCapabilities, request: ChatRequest, *, verbatim_tool_calling: bool,
                     web_search: bool = False) -> StreamState:
    """Fresh guards for one stream; the verbatim parser only for custom + option + tools.
    `web_search`: the request carried the provider's native search field."""
    verbatim = None
    if capabilities.provider is Provider.CUSTOM and verbatim_tool_calling and request.tools:
        verbatim = VerbatimToolCallParser(request.tools)
    return StreamState(
        provider=capabilities.provider,
        stripper=ThinkBlockContentStripper(),
        spill=ReasoningContentSpillGuard(),
        verbatim=verbatim,
        searched=web_search,
        searches_once=web_search and capabilities.web_search == "openrouter_plugin",
        replays_reasoning=capabilities.replays_reasoning,
        learns_replay=replays_streamed_reasoning(capabilities),
    )


# ---- errors --------------------------------------------------------------------------------
def _malformed(state: StreamState, why: str, data: bytes) -> ProcessedChunk:
    err = classify_failure(
        provider=state.provider, message=f"malformed stream: {why}", error_type="malformed_stream",
        original_error=data[:500].decode("utf-8", "replace"),
    )
    return _error_chunk(state, err)


def _error_chunk(state: StreamState, err: ProviderError) -> ProcessedChunk:
    state.ended = True
    return ProcessedChunk(type="error", error=err, serving_provider=state.serving_provider)


def _body_error(state: StreamState, body: Any) -> ProcessedChunk:
    """A mid-stream error payload, classified exactly like the same body on the HTTP path."""
    return _error_chunk(state, classify_stream_error(provider=state.provider, body=body))


def interrupted(state: StreamState, message: str) -> ProcessedChunk:
    err = classify_failure(provider=state.provider, message=message, error_type=STREAM_INTERRUPTED)
    return _error_chunk(state, err)


# ---- text and thoughts ---------------------------------------------------------------------
def _raw(state: StreamState, text: str) -> ThoughtLogEntry:
    return ThoughtLogEntry("raw", text, state.provider)


def _visible(state: StreamState, text: str, thoughts: list[ThoughtLogEntry], out: list) -> None:
    """Content through stripper → spill guard → verbatim parser, in that order."""
    stripped = state.stripper.feed(text)
    visible = stripped.visible_text
    if stripped.thought_text:
        thoughts.append(_raw(state, stripped.thought_text))
        state.spill.observe_reasoning(stripped.thought_text)
    if visible:
        guarded = state.spill.feed(visible)
        visible = guarded.content
        if guarded.spilled_thought:
            thoughts.append(_raw(state, guarded.spilled_thought))
    if visible and state.verbatim is not None:
        parsed = state.verbatim.feed(visible)
        if parsed.function_call is not None:
            out.append(_verbatim_call(state, parsed.function_call))
        visible = parsed.visible_text
    if visible:
        out.append(visible)


def _verbatim_call(state: StreamState, call: Any) -> FunctionCall:
    state.verbatim_count += 1
    state.made_calls = True
    return FunctionCall(name=call.name, args=dict(call.args), id=f"verbatim_{state.verbatim_count}")


def _without_tag_fragment(text: str) -> str:
    fragment = find_trailing_tag_prefix(text) if text else None
    return text if fragment is None else text[: fragment.index]


def _flush_guards(
    state: StreamState, thoughts: list[ThoughtLogEntry], out: list, *, cut: bool = False
) -> None:
    """Release everything the guards hold: held text is visible, open blocks are thoughts.

    On a cut stream (`cut=True`) a trailing piece of a think tag (`<thi`) is not shown: the
    stream did not end there, so it is neither known text nor a known tag.
    """
    if not state.pending_flush:
        return
    state.pending_flush = False
    stripped = state.stripper.flush()
    thought, held = stripped.thought_text, stripped.visible_text
    if cut:
        thought, held = _without_tag_fragment(thought), _without_tag_fragment(held)
    if thought:
        thoughts.append(_raw(state, thought))
        state.spill.observe_reasoning(thought)
    visible = ""
    if held:
        guarded = state.spill.feed(held)
        if guarded.spilled_thought:
            thoughts.append(_raw(state, guarded.spilled_thought))
        visible = guarded.content
    visible += state.spill.flush().content
    if state.verbatim is None:
        if visible:
            out.append(visible)
        return
    if cut:  # what the verbatim parser holds is a call still being written: withheld
        if visible:
            parsed = state.verbatim.feed(visible)
            if parsed.visible_text:
                out.append(parsed.visible_text)
        return
    if visible:
        parsed = state.verbatim.feed(visible)
        if parsed.function_call is not None:
            out.append(_verbatim_call(state, parsed.function_call))
        if parsed.visible_text:
            out.append(parsed.visible_text)
    final = state.verbatim.flush()
    if final.function_call is not None:
        out.append(_verbatim_call(state, final.function_call))
    if final.pending_text:
        out.append(final.pending_text)


# ---- tool calls ----------------------------------------------------------------------------
def _finish_calls(state: StreamState, out: list) -> str | None:
    """Every accumulated call as its own FunctionCall, in index order."""
    for index in sorted(state.calls):
        partial = state.calls[index]
        name = "".join(partial.name)
        if not name:
            return f"tool call {index} has no name"
        parsed = parse_tool_arguments("".join(partial.arguments), adapter=state.provider, tool_name=name)
        fields: dict[str, Any] = {}
        if state.reasoning_details:
            fields[REASONING_DETAILS] = state.reasoning_details
            state.reasoning_details = []
        if state.replays_reasoning:  # even empty: a thinking mode refuses the turn without it
            fields[REASONING_CONTENT] = "".join(state.reasoning_for_replay)
        out.append(FunctionCall(
            name=name, args=parsed.args, id=partial.id or f"call_{index}",
            provider_fields=fields, arguments_truncated=parsed.truncated,
        ))
        state.made_calls = True
    state.calls.clear()
    state.reasoning_for_replay.clear()
    return None


def _merge_reasoning_details(state: StreamState, items: Any, thoughts: list[ThoughtLogEntry]) -> None:
    """Accumulate OpenRouter reasoning_details for replay: pieces of one item share its index."""
    if not isinstance(items, list):
        raise ValueError("reasoning_details is not a list")
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("reasoning_details item is not an object")
        if item.get("type") == "reasoning.encrypted":
            thoughts.append(ThoughtLogEntry("redacted", "", state.provider))
        target = None
        if "index" in item:
            for known in state.reasoning_details:
                if known.get("index") == item["index"] and known.get("type") == item.get("type"):
                    target = known
                    break
        if target is None:
            state.reasoning_details.append(dict(item))
            continue
        for key, value in item.items():
            if key in ("text", "summary", "data") and isinstance(value, str):
                target[key] = (target.get(key) or "") + value
            elif value not in (None, ""):
                target[key] = value


# ---- searches --------------------------------------------------------------------------------
# ---- the event --------------------------------------------------------------------------------
def _choice_zero(choices: list) -> dict | None:
    for choice in choices:
        if not isinstance(choice, dict):
            raise ValueError("choice is not an object")
        if choice.get("index", 0) == 0:
            return choice
    return None


def _finish(state: StreamState, thoughts: list[ThoughtLogEntry], out: list) -> str | None:
    _flush_guards(state, thoughts, out)
    return _finish_calls(state, out)


def _materialize(state: StreamState, thoughts: list[ThoughtLogEntry], out: list) -> list[ProcessedChunk]:
    """Segments → chunks; this event's thoughts ride on its first chunk (their order kept)."""
    serving = state.serving_provider
    chunks: list[ProcessedChunk] = []
    if thoughts and (not out or not isinstance(out[0], str)):
        chunks.append(ProcessedChunk(type="text", content="", thoughts=thoughts, serving_provider=serving))
        thoughts = []
    for segment in out:
        if isinstance(segment, str):
            chunks.append(ProcessedChunk(type="text", content=segment, thoughts=thoughts or None,
                                         serving_provider=serving))
        else:
            chunks.append(ProcessedChunk(type="function_call", function_call=segment,
                                         serving_provider=serving))
        thoughts = []
    return chunks


def _done(state: StreamState, thoughts: list[ThoughtLogEntry], out: list) -> list[ProcessedChunk]:
    problem = _finish(state, thoughts, out)
    if problem is not None:
        return [*_materialize(state, thoughts, out), _malformed(state, problem, b"")]
    state.ended = True
    chunks = _materialize(state, thoughts, out)
    reason = finish_reason_of(state.finish_reason, FINISH_REASONS, made_calls=state.made_calls)
    usage = searched_usage(state.usage, state.searched, once=state.searches_once, cited=bool(state.sources))
    done = done_chunk(reason, usage, state.serving_provider)
    # OpenRouter does not say what it searched for: `searches` stays None.
    done.sources = list(state.sources) if state.sources else None
    chunks.append(done)
    return chunks


def release_held(state: StreamState) -> list[ProcessedChunk]:
    """On an error ending, what the guards still hold is released as visible text
    (flushed however the stream ends; nothing visible is lost). A call the verbatim parser
    could still resolve is withheld: a cut stream never dispatches a call."""
    thoughts: list[ThoughtLogEntry] = []
    out: list[Any] = []
    _flush_guards(state, thoughts, out, cut=True)
    return _materialize(state, thoughts, [s for s in out if isinstance(s, str)])


def fail(state: StreamState, err: ProviderError) -> list[ProcessedChunk]:
    """A failure outside the body (transport reset, inactivity timeout): held text, then the error."""
    if state.ended:
        return []
    return [*release_held(state), _error_chunk(state, err)]


def process_event(state: StreamState, event: SSEEvent) -> list[ProcessedChunk]:
    """One SSE event → zero or more chunks. Never raises on provider input."""
    chunks = _process_event(state, event)
    if chunks and chunks[-1].type == "error" and state.pending_flush:
        chunks[-1:-1] = release_held(state)
    return chunks


def _process_event(state: StreamState, event: SSEEvent) -> list[ProcessedChunk]:
    if state.ended:
        return []
    name, data = event
    thoughts: list[ThoughtLogEntry] = []
    out: list[Any] = []
    if event is END_OF_BODY or data == b"[DONE]":
        if event is END_OF_BODY and state.finish_reason is None:
            return [interrupted(state, "the stream ended before the provider finished the answer")]
        return _done(state, thoughts, out)
    try:
        payload = jiter.from_json(data)
    except ValueError as exc:
        return [_malformed(state, f"event is not JSON ({exc})", data)]
    if name == "error" or (isinstance(payload, dict) and payload.get("error")):
        head: list[ProcessedChunk] = []
        if isinstance(payload, dict):
            try:  # what the error chunk itself carries is still delivered first
                head = _process_payload(state, payload, thoughts, out, finishing=False)
            except ValueError:
                head = []
        return [*head, _body_error(state, payload)]
    if not isinstance(payload, dict):
        return [_malformed(state, "event is not a JSON object", data)]
    try:
        return _process_payload(state, payload, thoughts, out)
    except ValueError as exc:
        return [_malformed(state, str(exc), data)]


def _process_payload(
    state: StreamState, payload: dict, thoughts: list[ThoughtLogEntry], out: list, *,
    finishing: bool = True,
) -> list[ProcessedChunk]:
    if state.serving_provider is None:
        backend = payload.get("provider")
        if isinstance(backend, str) and backend.strip():
            state.serving_provider = backend.strip()
    usage = payload.get("usage")
    if usage is not None:
        merge_report(state.usage, usage)
    choices = payload.get("choices")
    if not choices:
        if choices is not None and not isinstance(choices, list):
            raise ValueError("choices is not a list")
        return []
    if not isinstance(choices, list):
        raise ValueError("choices is not a list")
    choice = _choice_zero(choices)
    if choice is None:
        return []
    delta = choice.get("delta") or {}
    if not isinstance(delta, dict):
        raise ValueError("delta is not an object")
    reasoning = delta.get(REASONING_CONTENT)
    if reasoning is not None and state.learns_replay:
        state.replays_reasoning = True  # the stream carries the field: its calls carry it back
    if not reasoning:
        reasoning = delta.get("reasoning")
    if reasoning:
        if not isinstance(reasoning, str):
            raise ValueError("reasoning is not a string")
        thoughts.append(_raw(state, reasoning))
        state.spill.observe_reasoning(reasoning)
        if state.replays_reasoning:
            state.reasoning_for_replay.append(reasoning)
    details = delta.get("reasoning_details")
    if details:
        _merge_reasoning_details(state, details, thoughts)
    annotations = delta.get("annotations")
    if annotations:
        state.sources.extend(url_citations(annotations))
    for key in ("content", "refusal"):
        text = delta.get(key)
        if text:
            if not isinstance(text, str):
                raise ValueError(f"{key} is not a string")
            state.pending_flush = True
            _visible(state, text, thoughts, out)
    if delta.get("tool_calls") is not None:
        accumulate_calls(state.calls, delta["tool_calls"])
    finish = choice.get("finish_reason")
    if finish is not None and finishing:
        if not isinstance(finish, str):
            raise ValueError("finish_reason is not a string")
        if finish == "error":
            err = classify_failure(provider=state.provider, message="the provider ended the answer with an error",
                                   error_type=STREAM_INTERRUPTED, original_error=payload)
            return [*_materialize(state, thoughts, out), _error_chunk(state, err)]
        state.finish_reason = finish
        problem = _finish(state, thoughts, out)
        if problem is not None:
            return [*_materialize(state, thoughts, out), _malformed(state, problem, b"")]
    return _materialize(state, thoughts, out)
