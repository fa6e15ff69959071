"""Build one Responses API request (`POST /v1/responses`) from a `ChatRequest` (pure, no I/O).

The conversation is sent whole every time, statelessly (`store: false`): nothing is kept
on OpenAI's side between the turns of an answer, so an assistant turn that called tools
replays, right before each call, the reasoning items that led to it, with their
`encrypted_content` (`include: ["reasoning.encrypted_content"]` asks for it on every
reasoning model). The API refuses a reasoning item it cannot read without its stored copy
("Items are not persisted when `store` is set to false"), and one that is not followed by
the item it led to ("... was provided without its required following item"); the stream
keeps each call's own reasoning items (`events.REASONING_ITEMS`), so both hold.

What the model takes is read from its `ModelCapabilities`
(`providers/openai_responses/capabilities.py`): reasoning (`reasoning.effort`, with
`summary: "auto"` so the summary streams), a temperature (never on a reasoning model),
PDFs as `input_file` parts, function tools, and the native `web_search` tool. The
Responses API has no `name` on a message, so who said a user turn is a "Name: " prefix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from providers.continuation import CONTINUE_ASK
from providers.effort import effort_for_budget
from providers.model_capabilities import ModelCapabilities
from providers.speaker import with_speaker
from providers.types import (
    ChatRequest,
    ContentPart,
    DocumentPart,
    FunctionCall,
    ImagePart,
    Message,
    ToolSpec,
    content_parts,
    content_text,
    part_text,
)

# FunctionCall.provider_fields key: the reasoning items that came right before the call.
REASONING_ITEMS = "openai_reasoning_items"
ENCRYPTED_REASONING = "reasoning.encrypted_content"
PDF_MEDIA_TYPE = "application/pdf"
WEB_SEARCH_TOOL = "web_search"
# The API refuses a smaller output cap ("Invalid 'max_output_tokens': integer below minimum
# value. Expected a value >= 16", reported in public trackers, e.g. earendil-works/pi#6265).
MIN_OUTPUT_TOKENS = 16


def call_id(call: FunctionCall, position: int) -> str:
    """The id a call travels under; the stream always sets one, this covers hand-built history."""
    return call.id or f"call_{position}"


def _is_pdf(part: DocumentPart) -> bool:
    return part.media_type.split(";", 1)[0].strip().lower() == PDF_MEDIA_TYPE


def _input_part(part: ContentPart, files: bool) -> dict[str, Any] | None:
    """One user content part: text, an image as a data URL, a PDF as an `input_file` where
    the model reads files (`files`), else any document as its extracted text (None when it
    has none: the bot's note already says so, and an empty text part is refused)."""
    if isinstance(part, ImagePart):
        return {"type": "input_image", "image_url": f"data:{part.media_type};base64,{part.base64()}",
                "detail": "auto"}
    if isinstance(part, DocumentPart):
        if files and _is_pdf(part):
            return {"type": "input_file", "filename": part.filename or "document.pdf",
                    "file_data": f"data:{PDF_MEDIA_TYPE};base64,{part.base64()}"}
        text = part_text(part)
        return {"type": "input_text", "text": text} if text else None
    return {"type": "input_text", "text": part.text} if part.text else None


def _user(message: Message, files: bool) -> dict[str, Any] | None:
    """A user turn, its speaker as a prefix: plain text stays a string (the API takes one),
    parts become the content list; None when nothing in it can be sent."""
    content = with_speaker(message.content, message.name)
    if isinstance(content, str):
        return {"role": "user", "content": content} if content else None
    parts = [p for p in (_input_part(part, files) for part in content_parts(content)) if p is not None]
    return {"role": "user", "content": parts} if parts else None


def _calls(message: Message) -> list[dict[str, Any]]:
    """Each call of an assistant turn, right after the reasoning items that led to it."""
    items: list[dict[str, Any]] = []
    for position, call in enumerate(message.tool_calls):
        items.extend(dict(item) for item in call.provider_fields.get(REASONING_ITEMS, ()))
        items.append({"type": "function_call", "call_id": call_id(call, position), "name": call.name,
                      "arguments": json.dumps(call.args, ensure_ascii=False)})
    return items


def build_input(request: ChatRequest, capabilities: ModelCapabilities) -> list[dict[str, Any]]:
    """The conversation as input items.

    An assistant turn is its text as an assistant message, then its calls; a tool result
    is a `function_call_output` paired with its call by `call_id`. A partial answer is
    continued the "ask" way (`providers/continuation.py`): the Responses API has no
    prefill, so a user turn after it asks to go on."""
    files = capabilities.documents == "file"
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "assistant":
            text = content_text(message.content)
            if text:
                items.append({"role": "assistant", "content": text})
            items.extend(_calls(message))
            if message.partial_answer:
                items.append({"role": "user", "content": CONTINUE_ASK})
        elif message.role == "tool":
            items.append({"type": "function_call_output", "call_id": message.tool_call_id or "",
                          "output": content_text(message.content)})
        elif message.role == "user":
            user = _user(message, files)
            if user is not None:
                items.append(user)
        elif content_text(message.content):
            items.append({"role": message.role, "content": content_text(message.content)})
    return items


def _function_tools(tools: Sequence[ToolSpec], searching: bool) -> list[dict[str, Any]]:
    """Function tools in the Responses form (flat, `strict: false`: the bot's schemas are not
    written for strict mode); with the native search on, a function of the same name (the
    bot's own search) gives way to it."""
    return [{"type": "function", "name": tool.name, "description": tool.description,
             "parameters": dict(tool.parameters), "strict": False}
            for tool in tools if not (searching and tool.name == WEB_SEARCH_TOOL)]


def searches_here(capabilities: ModelCapabilities, request: ChatRequest) -> bool:
    """Whether this request carries the native `web_search` tool: it asks for at least one
    search and the model searches on the Responses API."""
    search = request.web_search
    return search is not None and search.max_searches >= 1 and capabilities.web_search == "responses_tool"


def reasoning_effort(request: ChatRequest, capabilities: ModelCapabilities) -> str | None:
    """The effort asked, in a word the model takes: a thinking budget maps to one as the
    Anthropic builder maps it (an explicit budget wins, as there); None when none is asked
    or the word is not one the model takes."""
    reasoning = capabilities.reasoning
    if reasoning is None:
        return None
    if request.thinking_budget is not None and request.thinking_budget > 0:
        effort: str | None = effort_for_budget(request.thinking_budget)
    else:
        effort = (request.reasoning_effort or "").strip().lower() or None
    return effort if effort in reasoning.efforts else None


def _add_reasoning(body: dict[str, Any], request: ChatRequest, capabilities: ModelCapabilities) -> None:
    """A reasoning model gets its effort when one is asked, and its summary shown
    (`summary: "auto"`) whether or not: it reasons anyway, and the summary is what the
    thought log shows. Its reasoning comes back encrypted for the stateless replay."""
    reasoning = capabilities.reasoning
    if reasoning is None:
        return
    settings: dict[str, Any] = {}
    effort = reasoning_effort(request, capabilities)
    if effort is not None:
        settings["effort"] = effort
    if reasoning.summarized:
        settings["summary"] = "auto"
    if settings:
        body["reasoning"] = settings
    body["include"] = [ENCRYPTED_REASONING]


def build_body(request: ChatRequest, capabilities: ModelCapabilities) -> dict[str, Any]:
    """The whole JSON body of one streamed `POST /responses` for `request`, in the forms the
    model takes (see the module docstring). `request.extra` fields go on top, as on the
    chat-completions path.

    A native search is bounded by `max_tool_calls` (the API reference: the most calls to
    built-in tools one response may make; further calls are ignored), which counts only
    built-in tools, so the function tools stay unbounded by it."""
    body: dict[str, Any] = {"model": capabilities.model, "input": build_input(request, capabilities),
                            "stream": True, "store": False}
    if request.system:
        body["instructions"] = request.system
    searching = searches_here(capabilities, request)
    tools = _function_tools(request.tools, searching) if capabilities.tools else []
    if searching:
        assert request.web_search is not None  # searches_here said so
        tools.append({"type": WEB_SEARCH_TOOL})
        body["max_tool_calls"] = request.web_search.max_searches
    if tools:
        body["tools"] = tools
    _add_reasoning(body, request, capabilities)
    if request.max_output_tokens is not None:
        body["max_output_tokens"] = max(MIN_OUTPUT_TOKENS, request.max_output_tokens)
    if request.temperature is not None and capabilities.takes_temperature:
        body["temperature"] = request.temperature
    body.update(request.extra)
    return body


def untyped_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of `responses.with_streaming_response.create` for `body`.

    As on the chat path (`providers/openai_compat/request.py::untyped_arguments`), the
    body goes in `extra_body`, which the SDK merges into the JSON it sends as is, instead
    of being walked argument by argument against the SDK's annotations; only `stream`
    stays typed, since it chooses the SDK's streaming path."""
    return {"stream": True, "extra_body": body}
