"""Gemini streamGenerateContent payloads -> ProcessedChunk.

Pure: `process_payload` reads one decoded payload and the per-stream `GeminiStream`
that `start_stream` created. Parts are handled in order: thought parts become thought
log entries, other text is visible, every `functionCall` part is its own call. A prompt
block or a safety-type finish reason becomes a `content_blocked` error after the text
of the same payload. Gemini has no end event: `done` comes with the end of the body,
and a body that ends before any finish reason is an interrupted stream. Every payload
may carry running `usageMetadata` totals; they are merged and converted once, then
(`gemini_usage`, FINISH_REASONS).

Grounding with Google Search: each candidate's `groundingMetadata` is folded into the
stream's `Grounding` (providers/gemini/grounding.py) as it comes; the done chunk carries
its sources (citation order) and queries, and `Usage.searches` counts the queries. Google
bills grounding per search query on Gemini 3 and later, per grounded prompt (one charge
however many queries) on Gemini 2.x and older; the count is the same either way, the
price is the usage layer's business.

Server-side tool parts: with Google Search next to function declarations
(`toolConfig.includeServerSideToolInvocations`, Gemini 3), the search the API ran streams
as `toolCall` / `toolResponse` parts, each with its `thoughtSignature`. They are not the
bot's to run or show, but Google's tool-combination guide asks for every part back
"exactly as received" in the next request: each is kept whole, in order, and handed to the
first function call that follows it (`FunctionCall.provider_fields[SERVER_TOOL_PARTS]`),
so the tool loop's next round replays them ahead of that call (`request.build_contents`).
Parts after the last call have no round to go back in and are dropped with the stream.

Thought kind: `thought: true` text is logged as `raw`, like every other provider's
reasoning text, even though with `includeThoughts` Gemini actually returns summaries;
THOUGHT_KIND is the one place that says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from providers.done_report import (
    count,
    done_chunk,
    finish_reason_of,
    merge_report,
    sum_reported,
    usage_of,
)
from providers.errors import STREAM_INTERRUPTED, classify_error_body, classify_failure
from providers.gemini.grounding import Grounding, read_grounding
from providers.gemini.request import SERVER_TOOL_PARTS, THOUGHT_SIGNATURE
from providers.types import (
    FinishReason,
    FunctionCall,
    ProcessedChunk,
    ProviderError,
    ThoughtLogEntry,
    Usage,
)

PROVIDER = "google"
THOUGHT_KIND = "raw"
BLOCKING_FINISH_REASONS = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)
# The parts of a search the API ran itself (Gemini 3's tool context circulation).
SERVER_PART_KEYS = ("toolCall", "toolResponse")
FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    **{reason: "content_filter" for reason in BLOCKING_FINISH_REASONS},
}


@dataclass(slots=True)
class GeminiStream:
    """Everything one stream needs across payloads; made fresh by every start_stream."""

    finish_reason: str | None = None
    # The `usageMetadata` fields of every payload merged, converted once at the end.
    usage: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    # Server-side tool parts (toolCall / toolResponse) since the last function call, whole.
    server_parts: list[dict[str, Any]] = field(default_factory=list)
    # Sources and queries of Grounding with Google Search, from every payload's metadata.
    grounding: Grounding = field(default_factory=Grounding)


def malformed(detail: str) -> ProcessedChunk:
    error = classify_failure(provider=PROVIDER, message=f"malformed Gemini stream: {detail}")
    return ProcessedChunk(type="error", error=error)


def interrupted(detail: str) -> ProviderError:
    return classify_failure(
        provider=PROVIDER, message=f"Gemini stream interrupted: {detail}", error_type=STREAM_INTERRUPTED
    )


def classify_body(body: Any, *, status: int | None = None, original_error: Any = None) -> ProviderError:
    """An error body, from an HTTP error or inside the stream, classified the same way.

    Gemini's RESOURCE_EXHAUSTED says "exceeded your current quota" for per-minute and
    per-day quotas alike; its structured details (QuotaFailure, RetryInfo) tell them apart,
    and `classify_error_body` reads them before the wording.
    """
    # The SDK error has no `.body`: the body itself is kept as the provider's own words.
    return classify_error_body(provider=PROVIDER, body=body, status=status, original_error=original_error,
                               keep_body=True)


def _blocked(message: str, reason: str, details: Any) -> ProcessedChunk:
    error = classify_failure(provider=PROVIDER, message=message, code=reason,
                             error_type="content_blocked", details=details)
    return ProcessedChunk(type="error", error=error)


def _call(state: GeminiStream, part: dict[str, Any]) -> ProcessedChunk:
    function_call = part["functionCall"]
    if not isinstance(function_call, dict):
        raise ValueError("functionCall is not an object")
    name = function_call.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("functionCall without a name")
    args = function_call.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ValueError("functionCall args are not an object")
    ident = function_call.get("id")
    signature = part.get("thoughtSignature")
    state.calls += 1
    signature = signature if isinstance(signature, str) and signature else None
    fields: dict[str, Any] = {THOUGHT_SIGNATURE: signature} if signature else {}
    if state.server_parts:
        fields[SERVER_TOOL_PARTS] = state.server_parts
        state.server_parts = []
    call = FunctionCall(
        name=name, args=args, id=ident if isinstance(ident, str) else None,
        thought_signature=signature, provider_fields=fields,
    )
    return ProcessedChunk(type="function_call", function_call=call)


def _server_part(state: GeminiStream, part: dict[str, Any]) -> None:
    """Keep a toolCall / toolResponse part whole for the next round (see the module docstring)."""
    for key in SERVER_PART_KEYS:
        if key in part and not isinstance(part[key], dict):
            raise ValueError(f"{key} is not an object")
    state.server_parts.append(dict(part))


def _parts(state: GeminiStream, parts: list[Any]) -> list[ProcessedChunk]:
    out: list[ProcessedChunk] = []
    text: list[str] = []
    thoughts: list[ThoughtLogEntry] = []
    for part in parts:
        if not isinstance(part, dict):
            raise ValueError("part is not an object")
        signature = part.get("thoughtSignature")
        if "toolCall" in part or "toolResponse" in part:  # SERVER_PART_KEYS, without a generator per part
            _server_part(state, part)
        if "functionCall" in part:
            if text or thoughts:
                out.append(ProcessedChunk(type="text", content="".join(text), thoughts=thoughts or None))
                text, thoughts = [], []
            out.append(_call(state, part))
            continue
        value = part.get("text")
        if value is not None and not isinstance(value, str):
            raise ValueError("part text is not a string")
        if part.get("thought") is True:
            if value:
                thoughts.append(ThoughtLogEntry(THOUGHT_KIND, value, PROVIDER))  # type: ignore[arg-type]
        elif value:
            text.append(value)
        if isinstance(signature, str) and signature:
            thoughts.append(ThoughtLogEntry("signature", signature, PROVIDER))
    if text or thoughts:
        out.append(ProcessedChunk(type="text", content="".join(text), thoughts=thoughts or None))
    return out


def gemini_usage(usage: dict[str, Any]) -> Usage | None:
    """Gemini's `usageMetadata` → `Usage`.

    Thinking tokens (`thoughtsTokenCount`) are billed as output but not counted in
    `candidatesTokenCount`, so the output is their sum; `promptTokenCount` already
    includes the cached content.
    """
    thoughts = count(usage.get("thoughtsTokenCount"))
    return usage_of(
        count(usage.get("promptTokenCount")),
        sum_reported(count(usage.get("candidatesTokenCount")), thoughts),
        reasoning_tokens=thoughts,
        cached_input_tokens=count(usage.get("cachedContentTokenCount")),
        total_tokens=count(usage.get("totalTokenCount")),
    )


def _dispatch(state: GeminiStream, payload: dict[str, Any]) -> list[ProcessedChunk]:
    if "error" in payload:
        return [ProcessedChunk(type="error", error=classify_body(payload))]
    merge_report(state.usage, payload.get("usageMetadata"))
    out: list[ProcessedChunk] = []
    candidates = payload.get("candidates")
    finish: str | None = None
    candidate: dict[str, Any] = {}
    if candidates is not None:
        if not isinstance(candidates, list):
            raise ValueError("candidates is not a list")
        if candidates:
            candidate = candidates[0]
            if not isinstance(candidate, dict):
                raise ValueError("candidate is not an object")
            content = candidate.get("content") or {}
            if not isinstance(content, dict):
                raise ValueError("content is not an object")
            parts = content.get("parts") or []
            if not isinstance(parts, list):
                raise ValueError("parts is not a list")
            out.extend(_parts(state, parts))
            finish = candidate.get("finishReason")
            if finish is not None and not isinstance(finish, str):
                raise ValueError("finishReason is not a string")
            read_grounding(state.grounding, candidate.get("groundingMetadata"))
    feedback = payload.get("promptFeedback")
    if isinstance(feedback, dict):
        reason = feedback.get("blockReason")
        if isinstance(reason, str) and reason and reason != "BLOCKED_REASON_UNSPECIFIED":
            message = feedback.get("blockReasonMessage") or f"Gemini blocked the prompt ({reason})"
            out.append(_blocked(str(message), reason, feedback))
            return out
    if finish:
        state.finish_reason = finish
        if finish in BLOCKING_FINISH_REASONS:
            details = {k: candidate[k] for k in ("safetyRatings", "citationMetadata") if k in candidate}
            message = candidate.get("finishMessage") or f"Gemini stopped the response ({finish})"
            out.append(_blocked(str(message), finish, details or None))
    return out


def _done(state: GeminiStream) -> ProcessedChunk:
    """The done chunk: finish reason, usage, and what a grounded response searched and cited."""
    reason = finish_reason_of(state.finish_reason, FINISH_REASONS, made_calls=state.calls > 0)
    usage = gemini_usage(state.usage)
    done = done_chunk(reason, usage)
    queries = state.grounding.searches()
    if queries is not None:
        done.sources = state.grounding.sources()
        done.searches = queries
        done.usage = replace(usage or Usage(), searches=len(queries))
    return done


def process_payload(state: GeminiStream, payload: Any, *, end: bool = False) -> list[ProcessedChunk]:
    """Normalize one decoded payload, or (`end=True`) the end of the body."""
    if end:
        if state.finish_reason is None:
            return [ProcessedChunk(type="error", error=interrupted("the body ended before a finish reason"))]
        return [_done(state)]
    if not isinstance(payload, dict):
        return [malformed("payload is not a JSON object")]
    try:
        return _dispatch(state, payload)
    except (KeyError, TypeError, ValueError) as exc:
        return [malformed(f"{exc.__class__.__name__} {exc}")]
