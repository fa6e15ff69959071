"""The contract types every layer speaks (spec §3).

Types built once per chunk are slotted dataclasses: the streaming hot path creates
thousands of them per second, and a pydantic model would cost several times more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

ChunkType = Literal["text", "function_call", "error", "done"]
ErrorType = Literal[
    "api_error", "rate_limit", "content_blocked", "timeout", "provider_overloaded", "model_error"
]
ThoughtKind = Literal["summary", "raw", "signature", "redacted"]
Role = Literal["system", "user", "assistant", "tool"]

CHUNK_TYPES: frozenset[str] = frozenset({"text", "function_call", "error", "done"})
ERROR_TYPES: frozenset[str] = frozenset(
    {"api_error", "rate_limit", "content_blocked", "timeout", "provider_overloaded", "model_error"}
)
THOUGHT_KINDS: frozenset[str] = frozenset({"summary", "raw", "signature", "redacted"})


@dataclass(slots=True)
class RawStreamChunk:
    """One provider-native event, untouched (a decoded SSE payload or SDK event)."""

    data: Any
    provider: str
    metadata: dict[str, Any] | None = None


@dataclass(slots=True)
class ThoughtLogEntry:
    """Reasoning captured from a stream; redacted reasoning is recorded, never decoded."""

    kind: ThoughtKind
    text: str
    provider: str

    def __post_init__(self) -> None:
        if self.kind not in THOUGHT_KINDS:
            raise ValueError(f"unknown thought kind {self.kind!r}; expected one of {sorted(THOUGHT_KINDS)}")


@dataclass(slots=True)
class FunctionCall:
    """A provider-agnostic tool call.

    `provider_fields` keeps what must be replayed when the tool result goes back
    (OpenRouter `reasoning_details`, DeepSeek/Z.ai `reasoning_content`).
    `arguments_truncated` is True only when a repair recovered part of a cut payload.
    """

    name: str
    args: dict[str, Any]
    id: str | None = None
    thought_signature: str | None = None
    provider_fields: dict[str, Any] = field(default_factory=dict)
    arguments_truncated: bool = False


@dataclass(slots=True)
class ProviderError:
    """A fully classified provider failure; `retryable` drives key rotation and fallback."""

    type: ErrorType
    message: str
    retryable: bool
    code: str | None
    status: int | None = None
    provider: str | None = None
    original_error: Any = None
    details: Any = None

    def __post_init__(self) -> None:
        if self.type not in ERROR_TYPES:
            raise ValueError(f"unknown error type {self.type!r}; expected one of {sorted(ERROR_TYPES)}")


@dataclass(slots=True)
class ProcessedChunk:
    """The one chunk shape the orchestrator routes."""

    type: ChunkType
    content: str | None = None
    function_call: FunctionCall | None = None
    error: ProviderError | None = None
    thoughts: list[ThoughtLogEntry] | None = None
    metadata: dict[str, Any] | None = None
    serving_provider: str | None = None

    def __post_init__(self) -> None:
        if self.type not in CHUNK_TYPES:
            raise ValueError(f"unknown chunk type {self.type!r}; expected one of {sorted(CHUNK_TYPES)}")


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """A tool declaration; `parameters` is a JSON schema object."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(slots=True)
class Message:
    """One turn of history.

    Assistant turns that called tools carry `tool_calls`; a tool result carries
    `tool_call_id` and `name` so each provider can pair it with its call.
    """

    role: Role
    content: str
    tool_calls: Sequence[FunctionCall] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(slots=True)
class ChatRequest:
    """Everything an adapter needs to build one provider request."""

    messages: Sequence[Message]
    system: str | None = None
    tools: Sequence[ToolSpec] = ()
    max_output_tokens: int | None = None
    temperature: float | None = None
    # Reasoning: "low" | "medium" | "high" effort, or an explicit thinking budget in tokens.
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
