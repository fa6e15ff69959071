"""The contract types every layer speaks: requests, chunks, errors, usage.

Types built once per chunk are slotted dataclasses: the streaming hot path creates
thousands of them per second, and a pydantic model would cost several times more.
"""

from __future__ import annotations

import re
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

ChunkType = Literal["text", "function_call", "error", "done"]
ErrorType = Literal[
    "api_error", "rate_limit", "content_blocked", "timeout", "provider_overloaded", "model_error"
]
ThoughtKind = Literal["summary", "raw", "signature", "redacted"]
# Why a response ended, in one vocabulary whatever the provider called it.
FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "other"]
# What failed, decided once where the ProviderError is made; the turn's next step, the
# embed's headline and its tips are table lookups on it.
FailureKind = Literal[
    "rate_limit",  # the key's requests or tokens per time unit: wait, or the next key
    "balance_exhausted",  # nothing spendable on the account: only a top-up helps
    "credit_limit",  # some credit left, not enough for this request (fewer output tokens fit)
    "billing",  # the plan or billing state refuses this (402, plan without the model)
    "invalid_key",  # the key is wrong, revoked or not allowed (401/403)
    "model_error",  # the model id is unknown, unsupported or retired
    "context_length",  # the conversation does not fit the model's window
    "content_blocked",  # a safety system refused the content
    "timeout",  # no answer in time
    "overloaded",  # the provider is busy or failed (5xx, 529)
    "transient",  # any other failure worth retrying (cut stream, retryable api error)
    "unreachable",  # no connection to the provider (refused, DNS, TLS): is it up, is the address right
    "address_refused",  # the bot refused the endpoint's address (private, metadata) before sending
    "not_found",  # the address answered 404 with nothing naming a model: a wrong base URL (no /v1)
    "request_refused",  # any other failure not worth retrying (bad request, refused redirect)
]
Role = Literal["system", "user", "assistant", "tool"]

CHUNK_TYPES: frozenset[str] = frozenset({"text", "function_call", "error", "done"})
ERROR_TYPES: frozenset[str] = frozenset(
    {"api_error", "rate_limit", "content_blocked", "timeout", "provider_overloaded", "model_error"}
)
THOUGHT_KINDS: frozenset[str] = frozenset({"summary", "raw", "signature", "redacted"})
FINISH_REASONS: frozenset[str] = frozenset({"stop", "length", "tool_calls", "content_filter", "other"})
FAILURE_KINDS: frozenset[str] = frozenset({
    "rate_limit", "balance_exhausted", "credit_limit", "billing", "invalid_key", "model_error",
    "context_length", "content_blocked", "timeout", "overloaded", "transient", "unreachable",
    "address_refused", "not_found", "request_refused",
})
# The kind a bare ProviderError gets when its maker did not classify it further.
_KIND_OF_TYPE: dict[str, FailureKind] = {
    "rate_limit": "rate_limit",
    "content_blocked": "content_blocked",
    "timeout": "timeout",
    "provider_overloaded": "overloaded",
    "model_error": "model_error",
}


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


@dataclass(slots=True, frozen=True)
class ProviderError:
    """A fully classified provider failure.

    `type` is the coarse error class of the chunk contract; `kind` says what failed, set
    once where the error is made (`providers.errors.classify_failure` reads the body's
    structured fields before its wording). Without an explicit kind, one follows from
    `type` and `retryable`.
    """

    type: ErrorType
    message: str
    retryable: bool
    code: str | None
    status: int | None = None
    provider: str | None = None
    original_error: Any = None
    details: Any = None
    kind: FailureKind | None = None
    # Seconds the provider asked to wait (Retry-After, Gemini RetryInfo), when it said.
    retry_after: float | None = None
    # The finer cause, decided with the kind from the same evidence (a short stable word,
    # e.g. "plan_excludes_model", "private_address"), and the values a headline names
    # (e.g. {"upstream": ...}): presentation reads these, never the raw text again.
    reason: str | None = None
    facts: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.type not in ERROR_TYPES:
            raise ValueError(f"unknown error type {self.type!r}; expected one of {sorted(ERROR_TYPES)}")
        if self.kind is None:
            default = "transient" if self.retryable else "request_refused"
            object.__setattr__(self, "kind", _KIND_OF_TYPE.get(self.type, default))  # frozen: set once, here
        elif self.kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {self.kind!r}; expected one of {sorted(FAILURE_KINDS)}")


@dataclass(slots=True, frozen=True)
class Usage:
    """Token counts of one response, converted once by the adapter; None = not reported.

    `output_tokens` includes reasoning tokens (they are billed as output);
    `input_tokens` includes cached input tokens. The same type goes from the provider's
    edge to the database (`bot.usage.tokens`): the responses of a tool loop and the
    answers of one day row are added with `+`; `estimated` marks counts the bot guessed
    from characters because the provider reported none.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    total_tokens: int | None = None
    estimated: bool = False
    # Web searches the provider ran for this response (its own count where it reports one).
    searches: int | None = None

    def __add__(self, other: Usage) -> Usage:
        """Both counts added field by field; a field neither reported stays None; estimated
        when either was."""

        def plus(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(plus(self.input_tokens, other.input_tokens), plus(self.output_tokens, other.output_tokens),
                     plus(self.reasoning_tokens, other.reasoning_tokens),
                     plus(self.cached_input_tokens, other.cached_input_tokens),
                     plus(self.total_tokens, other.total_tokens), self.estimated or other.estimated,
                     plus(self.searches, other.searches))


@dataclass(slots=True, frozen=True)
class Source:
    """A web page an answer was grounded on (a provider's citation or a search result)."""

    url: str
    title: str | None = None


@dataclass(slots=True, frozen=True)
class WebSearch:
    """Search the web while answering, in the provider's own way (Gemini's `google_search`
    tool, Anthropic's web search server tool, OpenAI's `web_search` tool on the Responses
    API, OpenRouter's `openrouter:web_search` server tool; `ModelCapabilities.web_search`
    names the form), at most `max_searches` searches per response where the provider takes
    a bound."""

    max_searches: int = 3


@dataclass(slots=True)
class ProcessedChunk:
    """The one chunk shape the orchestrator routes."""

    type: ChunkType
    content: str | None = None
    function_call: FunctionCall | None = None
    error: ProviderError | None = None
    thoughts: list[ThoughtLogEntry] | None = None
    serving_provider: str | None = None
    # Set on the `done` chunk: why the response ended and what it cost.
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    # Set on the `done` chunk of a response that searched the web natively: the pages it
    # was grounded on, in the order the answer cites them (repeats allowed: the stream
    # layer keeps each URL once), and the queries the provider searched for.
    sources: list[Source] | None = None
    searches: list[str] | None = None

    def __post_init__(self) -> None:
        if self.type not in CHUNK_TYPES:
            raise ValueError(f"unknown chunk type {self.type!r}; expected one of {sorted(CHUNK_TYPES)}")
        if self.finish_reason is not None and self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"unknown finish reason {self.finish_reason!r}; expected one of {sorted(FINISH_REASONS)}")


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """A tool declaration; `parameters` is a JSON schema object."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(slots=True, frozen=True)
class TextPart:
    """A piece of text inside a message made of several parts."""

    text: str


@dataclass(slots=True, frozen=True)
class ImagePart:
    """An image the model should see; `data` is the encoded file (PNG, JPEG, ...)."""

    media_type: str
    data: bytes

    def base64(self) -> str:
        """The bytes as every family sends them inline: standard base64, no line breaks."""
        return b64encode(self.data).decode("ascii")


@dataclass(slots=True, frozen=True)
class DocumentPart:
    """A document the model should read (a PDF): the file for families that take documents
    (Gemini inline data, Claude's document block, OpenAI's and OpenRouter's file part), and
    its extracted `text` for the rest (None: no text layer; the bot names it in its note)."""

    media_type: str
    data: bytes
    filename: str
    text: str | None = None
    text_cut: bool = False  # the extracted text was cut to its bound

    def base64(self) -> str:
        return b64encode(self.data).decode("ascii")


@dataclass(slots=True, frozen=True)
class AudioPart:
    """A recording the model should hear (a Discord voice message): the file for a model
    that hears its `media_type` (`ModelCapabilities.audio`: Gemini inline data), replaced
    by its transcript for every other model before a request is sent. `text` is what an
    adapter sends when one reaches a model that cannot hear it anyway."""

    media_type: str
    data: bytes
    filename: str
    seconds: float
    source_id: int = 0  # the Discord attachment it came from: its transcript is kept by this id

    def base64(self) -> str:
        return b64encode(self.data).decode("ascii")

    @property
    def text(self) -> str:
        return f"[A voice message of {round(self.seconds)} s that this model cannot hear.]"


ContentPart = TextPart | ImagePart | DocumentPart | AudioPart


def content_parts(content: str | Sequence[ContentPart]) -> list[ContentPart]:
    """Any content as parts: a plain string is one text part (none when empty)."""
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    return list(content)


def content_text(content: str | Sequence[ContentPart]) -> str:
    """The text of any content (images left out; a document as its extracted text), for
    turns that only take text."""
    if isinstance(content, str):
        return content
    return "\n\n".join(text for text in map(part_text, content) if text)


def part_text(part: ContentPart) -> str:
    """What a text-only model reads of one part: a text, nothing of an image, a document's
    extracted text as a fenced block named by its file (with a line when it was cut)."""
    if isinstance(part, TextPart | AudioPart):  # a recording: the line saying it cannot be heard
        return part.text
    if isinstance(part, DocumentPart) and part.text:
        cut = "\n[The text of this document was cut to its first 500 KB.]" if part.text_cut else ""
        longest = max((len(run) for run in re.findall(r"`+", part.text)), default=0)
        fence = "`" * max(3, longest + 1)  # no run of backticks in the text can close it
        return f"Document {part.filename}:\n{fence}\n{part.text}\n{fence}{cut}"
    return ""


@dataclass(slots=True)
class Message:
    """One turn of history.

    `content` is a plain string, or parts when the turn carries images (see
    `content_parts`). Assistant turns that called tools carry `tool_calls`; a tool
    result carries `tool_call_id` and `name` so each provider can pair it with its call.

    `partial_answer` marks an assistant turn that was cut short (finish reason `length`)
    and that the model's next output continues: the member pressed Continue. Each family
    sends it in its own form (`providers/continuation.py`), and the stream then carries
    only the new text, to be appended to the answer. It lives on the message, not the
    request, so it survives a tool loop that appends turns after it. Only an assistant
    turn can be one (ValueError otherwise).
    """

    role: Role
    content: str | Sequence[ContentPart]
    tool_calls: Sequence[FunctionCall] = ()
    tool_call_id: str | None = None
    name: str | None = None
    partial_answer: bool = False

    def __post_init__(self) -> None:
        if self.partial_answer and self.role != "assistant":
            raise ValueError(f"only an assistant turn can be a partial answer to continue, not {self.role!r}")


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
    # Native web search for this request (None: no search tool of any kind is sent).
    web_search: WebSearch | None = None
