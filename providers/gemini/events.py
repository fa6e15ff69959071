"""Gemini streamGenerateContent payloads -> ProcessedChunk (rules A5, A8, E2-E4).

Pure: `process_payload` reads one decoded payload and the per-stream `GeminiStream`
that `start_stream` created. Parts are handled in order: thought parts become thought
log entries, other text is visible, every `functionCall` part is its own call. A prompt
block or a safety-type finish reason becomes a `content_blocked` error after the text
of the same payload. Gemini has no end event: `done` comes with the end of the body,
and a body that ends before any finish reason is an interrupted stream.

Thought kind: rule A5 logs `thought: true` text as `raw`, like every other provider's
reasoning text, even though with `includeThoughts` Gemini actually returns summaries;
THOUGHT_KIND is the one place that says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from providers.errors import STREAM_INTERRUPTED, classify_error_body, classify_failure
from providers.gemini.request import THOUGHT_SIGNATURE
from providers.sdk_adapter import done_chunk
from providers.types import FunctionCall, ProcessedChunk, ProviderError, ThoughtLogEntry

PROVIDER = "google"
THOUGHT_KIND = "raw"
BLOCKING_FINISH_REASONS = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)


@dataclass(slots=True)
class GeminiStream:
    """Everything one stream needs across payloads; made fresh by every start_stream."""

    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model_version: str | None = None
    response_id: str | None = None
    thought_signature: str | None = None
    calls: int = 0


def malformed(detail: str) -> ProcessedChunk:
    error = classify_failure(provider=PROVIDER, message=f"malformed Gemini stream: {detail}")
    return ProcessedChunk(type="error", error=error)


def interrupted(detail: str) -> ProviderError:
    return classify_failure(
        provider=PROVIDER, message=f"Gemini stream interrupted: {detail}", error_type=STREAM_INTERRUPTED
    )


def classify_body(body: Any, *, status: int | None = None, original_error: Any = None) -> ProviderError:
    """An error body, from an HTTP error or inside the stream, classified the same way (E2).

    The adapter's call on billing-worded 429s (E3.3): Gemini's RESOURCE_EXHAUSTED says
    "exceeded your current quota" for per-minute and per-day quotas of one key's
    project, so the error stays an `api_error` but is retryable: another key, or the
    same one later, can succeed.
    """
    error = classify_error_body(provider=PROVIDER, body=body, status=status, original_error=original_error)
    if error.details is None:
        error.details = body  # the SDK error has no `.body`; keep the provider's own words
    if error.status == 429 and error.type == "api_error":
        error.retryable = True
    return error


def _blocked(message: str, reason: str, details: Any) -> ProcessedChunk:
    error = ProviderError(
        type="content_blocked", message=message, retryable=False, code=reason,
        provider=PROVIDER, details=details,
    )
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
    call = FunctionCall(
        name=name, args=args, id=ident if isinstance(ident, str) else None,
        thought_signature=signature,
        provider_fields={THOUGHT_SIGNATURE: signature} if signature else {},
    )
    return ProcessedChunk(type="function_call", function_call=call)


def _parts(state: GeminiStream, parts: list[Any]) -> list[ProcessedChunk]:
    out: list[ProcessedChunk] = []
    text: list[str] = []
    thoughts: list[ThoughtLogEntry] = []
    for part in parts:
        if not isinstance(part, dict):
            raise ValueError("part is not an object")
        signature = part.get("thoughtSignature")
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
            state.thought_signature = signature
            thoughts.append(ThoughtLogEntry("signature", signature, PROVIDER))
    if text or thoughts:
        out.append(ProcessedChunk(type="text", content="".join(text), thoughts=thoughts or None))
    return out


def _record(state: GeminiStream, payload: dict[str, Any]) -> None:
    usage = payload.get("usageMetadata")
    if isinstance(usage, dict):
        state.usage = dict(usage)
    if isinstance(payload.get("modelVersion"), str):
        state.model_version = payload["modelVersion"]
    if isinstance(payload.get("responseId"), str):
        state.response_id = payload["responseId"]


def _dispatch(state: GeminiStream, payload: dict[str, Any]) -> list[ProcessedChunk]:
    if "error" in payload:
        return [ProcessedChunk(type="error", error=classify_body(payload))]
    _record(state, payload)
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


def process_payload(state: GeminiStream, payload: Any, *, end: bool = False) -> list[ProcessedChunk]:
    """Normalize one decoded payload, or (`end=True`) the end of the body."""
    if end:
        if state.finish_reason is None:
            return [ProcessedChunk(type="error", error=interrupted("the body ended before a finish reason"))]
        return [done_chunk(
            state.finish_reason, state.usage, model=state.model_version, id=state.response_id,
            thought_signature=state.thought_signature,
        )]
    if not isinstance(payload, dict):
        return [malformed("payload is not a JSON object")]
    try:
        return _dispatch(state, payload)
    except (KeyError, TypeError, ValueError) as exc:
        return [malformed(f"{exc.__class__.__name__} {exc}")]
