"""Build one chat-completions request from a `ChatRequest` (pure, no I/O).

Each provider of the family takes the same wire format but differs in a few fields,
all read from the model's `ModelCapabilities` (`providers/openai_compat/capabilities.py`):
the output-token cap's name, how reasoning is switched on (`reasoning.py`), which
reasoning fields must be sent back on an assistant turn that called tools, how the web
is searched natively (`add_web_search`), and whether a PDF goes as a file rather than as
its extracted text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from providers.continuation import CONTINUE_ASK
from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities
from providers.openai_compat.capabilities import (
    replays_reasoning_details,
    replays_streamed_reasoning,
)
from providers.openai_compat.reasoning import add_reasoning
from providers.speaker import name_field, with_speaker
from providers.types import (
    ChatRequest,
    ContentPart,
    DocumentPart,
    FunctionCall,
    ImagePart,
    Message,
    ToolSpec,
    content_text,
    part_text,
)

DEFAULT_BASE_URLS: dict[Provider, str] = {
    Provider.OPENAI: "https://api.openai.com/v1",
    Provider.OPENROUTER: "https://openrouter.ai/api/v1",
    Provider.DEEPSEEK: "https://api.deepseek.com",
    Provider.ZAI: "https://api.z.ai/api/paas/v4",
}
# The output-token cap's name: OpenAI's reasoning models refuse `max_tokens`, and OpenRouter
# deprecated it for `max_completion_tokens`; DeepSeek, Z.ai and most servers of one's own
# expect `max_tokens`.
OUTPUT_CAP_FIELDS: dict[Provider, str] = {
    Provider.OPENAI: "max_completion_tokens",
    Provider.OPENROUTER: "max_completion_tokens",
}
REASONING_CONTENT = "reasoning_content"  # FunctionCall.provider_fields: the reasoning to replay
REASONING_DETAILS = "reasoning_details"  # FunctionCall.provider_fields: OpenRouter's reasoning items


def call_id(call: FunctionCall, position: int) -> str:
    """The id a call travels under; adapters always set one, this covers hand-built history."""
    return call.id or f"call_{position}"


def _tool_call(call: FunctionCall, position: int) -> dict[str, Any]:
    return {
        "id": call_id(call, position),
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)},
    }


def _first_field(calls: Sequence[FunctionCall], key: str) -> Any:
    """The first value of `key` the calls carry; None when none carries one."""
    for call in calls:
        if key in call.provider_fields:
            return call.provider_fields[key]
    return None


def _assistant(capabilities: ModelCapabilities, message: Message) -> dict[str, Any]:
    """An assistant turn; one that called tools carries the reasoning that led to them back:
    OpenRouter's `reasoning_details`, and `reasoning_content` where the model's thinking
    mode requires it (`replays_reasoning`, then even empty) or the stream carried one
    (`replays_streamed_reasoning`: not on OpenRouter)."""
    text = content_text(message.content)
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = list(message.tool_calls)
    if not calls:
        out["content"] = text
        return out
    out["tool_calls"] = [_tool_call(call, i) for i, call in enumerate(calls)]
    details = _first_field(calls, REASONING_DETAILS) if replays_reasoning_details(capabilities) else None
    if details:
        out[REASONING_DETAILS] = details
    reasoning = _first_field(calls, REASONING_CONTENT)
    if capabilities.replays_reasoning or (reasoning is not None and replays_streamed_reasoning(capabilities)):
        out[REASONING_CONTENT] = reasoning or ""
    return out


PDF_MEDIA_TYPE = "application/pdf"

def _is_pdf(part: DocumentPart) -> bool:
    return part.media_type.split(";", 1)[0].strip().lower() == PDF_MEDIA_TYPE


def _document(part: DocumentPart, files: bool) -> dict[str, Any] | None:
    """A document as a `file` part (a PDF where `files`), else as its extracted text in a
    fenced block (`part_text`); None when it has no text to give."""
    if files and _is_pdf(part):
        return {"type": "file", "file": {
            "filename": part.filename or "document.pdf",
            "file_data": f"data:{PDF_MEDIA_TYPE};base64,{part.base64()}",
        }}
    text = part_text(part)
    return {"type": "text", "text": text} if text else None


def _part(part: ContentPart, files: bool) -> dict[str, Any] | None:
    if isinstance(part, ImagePart):
        url = f"data:{part.media_type};base64,{part.base64()}"
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(part, DocumentPart):
        return _document(part, files)
    return {"type": "text", "text": part.text}


def user_content(content: str | Sequence[ContentPart], *, files: bool = False) -> str | list[dict[str, Any]]:
    """A plain string stays a string (every server of the family takes it); parts become
    the content array, images as data URLs, a document as a `file` part where `files`
    (`takes_pdf_files`) and it is a PDF, else as a text part with its extracted text (a
    document without text gives no part). Parts that all give nothing are an empty string."""
    if isinstance(content, str):
        return content
    parts = [converted for converted in (_part(part, files) for part in content) if converted is not None]
    return parts or ""


def _user(message: Message, files: bool) -> dict[str, Any]:
    """A user turn; the speaker's name in the `name` field, or as a prefix when it does not fit."""
    field = name_field(message.name)
    content = message.content if field is not None else with_speaker(message.content, message.name)
    out: dict[str, Any] = {"role": "user", "content": user_content(content, files=files)}
    if field is not None:
        out["name"] = field
    return out


def build_messages(capabilities: ModelCapabilities, request: ChatRequest) -> list[dict[str, Any]]:
    """System prompt first, then the history in the family's message shape.

    Chat completions have no prefill (an answer never continues the last assistant
    message), so a partial answer is followed by a user turn asking to go on. A PDF in
    any user turn goes as a file where the model reads files (OpenRouter: every model,
    read natively or parsed by OpenRouter), as its text elsewhere (and in every other
    role)."""
    files = capabilities.documents == "file"
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "assistant":
            messages.append(_assistant(capabilities, message))
            if message.partial_answer:
                messages.append({"role": "user", "content": CONTINUE_ASK})
        elif message.role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": message.tool_call_id or "",
                 "content": content_text(message.content)}
            )
        elif message.role == "user":
            messages.append(_user(message, files))
        else:
            messages.append({"role": message.role, "content": content_text(message.content)})
    return messages


def build_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool declarations as OpenAI function schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in tools
    ]


# Pages one OpenRouter search puts before the model: its documented default, sent
# explicitly so what one request may cost is fixed ($4 per 1,000 results with Exa).
OPENROUTER_WEB_RESULTS = 5
OPENROUTER_SEARCH_TOOL = "openrouter:web_search"


def searches_here(capabilities: ModelCapabilities, request: ChatRequest) -> bool:
    """Whether this request carries the provider's own search: the request asks for at
    least one search and the model searches natively on chat completions (OpenRouter).
    DeepSeek, Z.ai and custom endpoints never do (the bot's own tool serves them)."""
    search = request.web_search
    return search is not None and search.max_searches >= 1 and capabilities.web_search is not None


def add_web_search(capabilities: ModelCapabilities, request: ChatRequest, body: dict[str, Any]) -> None:
    """Put the native search in `body` where `searches_here` says so.

    OpenRouter (https://openrouter.ai/docs/guides/features/server-tools/web-search): the
    `openrouter:web_search` server tool next to the function tools, for a model that takes
    tools: the model decides when to search; each search brings at most
    OPENROUTER_WEB_RESULTS pages (`max_results`), and all of them together at most that
    many per search allowed (`max_total_results`: the tool takes no bound on searches
    themselves, so what one answer may cost is bounded by the pages). A model that takes no
    tools gets the older `web` plugin (deprecated for the server tool, like the `:online`
    suffix), which searches once per request, so `max_searches` (at least 1) holds.
    Citations come back as `url_citation` annotations either way.
    """
    if not searches_here(capabilities, request):
        return
    search = request.web_search
    assert search is not None  # searches_here said so
    if capabilities.web_search == "openrouter_plugin":
        body["plugins"] = [{"id": "web", "max_results": OPENROUTER_WEB_RESULTS}]
        return
    tool = {"type": OPENROUTER_SEARCH_TOOL,
            "parameters": {"max_results": OPENROUTER_WEB_RESULTS,
                           "max_total_results": OPENROUTER_WEB_RESULTS * search.max_searches}}
    body["tools"] = [*body.get("tools", ()), tool]


def build_request(capabilities: ModelCapabilities, request: ChatRequest) -> dict[str, Any]:
    """Keyword arguments for `chat.completions.create` (streaming, usage included), in the
    forms the model takes (`capabilities`).

    Reasoning goes only where the model takes it (`providers/openai_compat/reasoning.py`);
    a native web search only where `searches_here` says; a temperature only where the
    model takes one. Without `request.web_search` no search field is sent anywhere.
    """
    body: dict[str, Any] = {
        "model": capabilities.model,
        "messages": build_messages(capabilities, request),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools and capabilities.tools:
        body["tools"] = build_tools(request.tools)
    if request.max_output_tokens is not None:
        body[OUTPUT_CAP_FIELDS.get(capabilities.provider, "max_tokens")] = request.max_output_tokens
    if request.temperature is not None and capabilities.takes_temperature:
        body["temperature"] = request.temperature
    extra: dict[str, Any] = {}
    add_reasoning(capabilities, request, body, extra)
    add_web_search(capabilities, request, extra)
    extra.update(request.extra)
    if extra:
        body["extra_body"] = extra
    return body


def untyped_arguments(arguments: dict[str, Any], unsent: Any) -> dict[str, Any]:
    """`build_request`'s arguments with the body in `extra_body`, which the SDK sends as is.

    The SDK walks every typed argument against its annotations before sending (about
    1.5 ms of CPU for a ten-message conversation, more with images), to turn typed
    objects into JSON. Ours is JSON already, so only the argument that chooses the SDK's
    streaming path stays typed; `extra_body` keys make the top level of the body sent.
    The two arguments the SDK requires, `model` and `messages`, are given as `unsent`
    (the SDK's `omit`, passed by the caller: this module imports no SDK), which the walk
    skips: walking even an empty list and the model's name hashed their annotations (the
    union of every message type, the literal of every OpenAI model) anew, about 0.2 ms
    per request. The `tools` of `extra_body` (a server tool) join the function tools."""
    body = {key: value for key, value in arguments.items() if key != "extra_body"}
    extra = dict(arguments.get("extra_body") or {})
    if "tools" in extra:
        extra["tools"] = [*body.get("tools", ()), *extra["tools"]]
    body.update(extra)
    return {"model": unsent, "messages": unsent, "stream": True, "extra_body": body}
