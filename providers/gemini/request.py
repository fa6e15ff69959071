"""Build the generateContent request body from a ChatRequest (pure, no I/O).

The body is the documented REST shape (camelCase) that the SDK's own converters
produce; the SDK's api client then adds the URL, API version, key header and sends it.
History becomes `user` / `model` turns; an assistant turn that called tools replays
each `functionCall` part with its own `thoughtSignature` (Gemini rejects a replayed
call whose signature is missing), preceded by the server-side tool parts (a search the
API ran: `toolCall` / `toolResponse`) that streamed before it, and tool results become
`functionResponse` parts in one user turn.

Web search (`ChatRequest.web_search`) is Grounding with Google Search, in the form the
model takes (`ModelCapabilities.web_search` and `.search_with_functions`, from
`providers/gemini/capabilities.py`):

- Gemini 2.x: the `googleSearch` tool. These models refuse a search tool next to
  function declarations (400 "Tool use with function calling is unsupported"), so a
  request with search carries search alone: its function declarations are left out.
- Gemini 3.x and any newer or unknown Gemini name: `googleSearch` next to the function
  declarations, with `toolConfig.includeServerSideToolInvocations` (Google's documented
  way to combine built-in tools and function calling, which Gemini 3 brought).
- Gemini 1.x: the legacy `googleSearchRetrieval` tool in dynamic mode (the model decides
  whether to search, as with `googleSearch`); alone, like 2.x.
- Gemma (served by the same API): no search tool; its function declarations as asked.

Gemini takes no bound on the number of searches, so `WebSearch.max_searches` is not
sent. Without `web_search` the body has no search tool of any kind.

Documents (`DocumentPart`): a PDF travels as images do, `inlineData` with
`mimeType: application/pdf` and base64 data, in its place among the turn's parts
(Gemini's document understanding, https://ai.google.dev/gemini-api/docs/document-processing).
The open Gemma models served by the same API take text and images but no documents
(`ModelCapabilities.documents`), so they read its extracted text (`providers.types.part_text`); so
does every model for a document of any other media type. Which models take images needs
no check here: every model this family serves takes them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from providers.effort import effort_for_budget
from providers.model_capabilities import ModelCapabilities, Reasoning
from providers.speaker import with_speaker
from providers.types import (
    AudioPart,
    ChatRequest,
    ContentPart,
    DocumentPart,
    FunctionCall,
    ImagePart,
    Message,
    content_parts,
    content_text,
    part_text,
)

# FunctionCall.provider_fields key a caller may use instead of `thought_signature`.
THOUGHT_SIGNATURE = "thought_signature"
# FunctionCall.provider_fields key: the server-side tool parts (toolCall / toolResponse, each
# with its thoughtSignature) that streamed before the call, replayed ahead of it.
SERVER_TOOL_PARTS = "gemini_server_tool_parts"
EFFORT_BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
# The document media types that travel as the file itself; any other reads as its text.
INLINE_DOCUMENT_TYPES = frozenset({"application/pdf"})


def _call_part(call: FunctionCall) -> dict[str, Any]:
    function_call: dict[str, Any] = {"name": call.name, "args": dict(call.args)}
    if call.id:
        function_call["id"] = call.id
    part: dict[str, Any] = {"functionCall": function_call}
    signature = call.thought_signature or call.provider_fields.get(THOUGHT_SIGNATURE)
    if signature:
        part["thoughtSignature"] = signature
    return part


def _server_parts(call: FunctionCall) -> list[dict[str, Any]]:
    return [dict(part) for part in call.provider_fields.get(SERVER_TOOL_PARTS, ())]


def _model_parts(message: Message) -> list[dict[str, Any]]:
    """A model turn: the server-side tool parts that led to the first call open it (the search
    ran before the answer's text), then the text, then each call after its own server-side
    parts, all exactly as they streamed (Google asks for them back as received)."""
    calls = list(message.tool_calls)
    parts = _server_parts(calls[0]) if calls else []
    text = content_text(message.content)
    if text:
        parts.append({"text": text})
    for i, call in enumerate(calls):
        if i:
            parts.extend(_server_parts(call))
        parts.append(_call_part(call))
    return parts


def _response_payload(content: str) -> dict[str, Any]:
    """functionResponse.response must be an object; wrap anything else."""
    try:
        value = json.loads(content)
    except ValueError:
        return {"result": content}
    return value if isinstance(value, dict) else {"result": value}


def _user_part(part: ContentPart, documents: bool) -> dict[str, Any] | None:
    """Images, and PDFs for a model that reads `documents`, travel inline (base64) in the
    REST shape's camelCase `inlineData`; any other document as its extracted text, and
    nothing (None) when it has none: the bot's note already says so, and an empty text
    part is refused."""
    if isinstance(part, ImagePart | AudioPart):  # audio: only for a model that hears it (for_attempt)
        return {"inlineData": {"mimeType": part.media_type, "data": part.base64()}}
    if isinstance(part, DocumentPart):
        if documents and part.media_type in INLINE_DOCUMENT_TYPES:
            return {"inlineData": {"mimeType": part.media_type, "data": part.base64()}}
        text = part_text(part)
        return {"text": text} if text else None
    return {"text": part.text}


def _append(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if not parts:
        return
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)
    else:
        contents.append({"role": role, "parts": parts})


def build_contents(messages: Sequence[Message], *, documents: bool = True) -> tuple[list[dict[str, Any]], list[str]]:
    """Gemini turns and the system texts found inside the history; a PDF in a user turn
    goes as the file when the model reads `documents` (`takes_documents`), else as its text.

    A partial answer (`Message.partial_answer`) needs nothing more: the contents end
    with its `model` turn, and Gemini continues a final model turn."""
    contents: list[dict[str, Any]] = []
    system_texts: list[str] = []
    names_by_id: dict[str, str] = {}
    for message in messages:
        if message.role == "system":
            if message.content:
                system_texts.append(content_text(message.content))
        elif message.role == "assistant":
            for call in message.tool_calls:
                if call.id:
                    names_by_id[call.id] = call.name
            _append(contents, "model", _model_parts(message))
        elif message.role == "tool":
            name = message.name or names_by_id.get(message.tool_call_id or "", "")
            response: dict[str, Any] = {"name": name, "response": _response_payload(content_text(message.content))}
            if message.tool_call_id:
                response["id"] = message.tool_call_id
            _append(contents, "user", [{"functionResponse": response}])
        elif message.content:
            content = with_speaker(message.content, message.name)  # the speaker, as a prefix
            parts = [_user_part(part, documents) for part in content_parts(content)]
            _append(contents, "user", [part for part in parts if part is not None])
    return contents, system_texts


def _level(reasoning: Reasoning, effort: str) -> str:
    """The model's thinking level for an effort word: the word itself where the model takes
    it, else the nearest level it takes (Gemini 3 Pro takes only low and high: medium
    thinks high; a level below all it takes is its lowest)."""
    order = ("minimal", "low", "medium", "high", "xhigh")
    wanted = order.index(effort) if effort in order else order.index("medium")
    taken = [order.index(level) for level in reasoning.efforts if level in order]
    above = [rank for rank in taken if rank >= wanted]
    return order[min(above) if above else max(taken)]


def thinking_config(request: ChatRequest, reasoning: Reasoning) -> dict[str, Any] | None:
    """Thinking with thought summaries when reasoning was asked for, in the model's form: a
    token budget (Gemini 2.5) or a thinking level (Gemini 3 and later, where a budget is
    suboptimal, and refused from 3.5 on)."""
    budget, effort = request.thinking_budget, (request.reasoning_effort or "").lower() or None
    if budget is None and effort not in EFFORT_BUDGETS:
        return None
    if reasoning.form == "level":
        if budget is not None and budget <= 0:
            return None  # "no thinking" has no level: the model's default stands
        word = effort if budget is None else effort_for_budget(budget, EFFORT_BUDGETS)
        return {"thinkingLevel": _level(reasoning, word), "includeThoughts": True}
    if budget is not None:
        return {"thinkingBudget": int(budget), "includeThoughts": budget != 0}
    return {"thinkingBudget": EFFORT_BUDGETS[effort], "includeThoughts": True}


def search_tool(capabilities: ModelCapabilities) -> dict[str, Any] | None:
    """The tool that grounds the model on Google Search, in its form; None without one (Gemma)."""
    if capabilities.web_search == "google_search_retrieval":
        return {"googleSearchRetrieval": {"dynamicRetrievalConfig": {"mode": "MODE_DYNAMIC"}}}
    if capabilities.web_search == "google_search":
        return {"googleSearch": {}}
    return None


def _tools(request: ChatRequest, capabilities: ModelCapabilities) -> tuple[list[dict[str, Any]], bool]:
    """The body's `tools`, and whether search rides next to function declarations."""
    declarations = [
        {
            "name": tool.name,
            "description": tool.description,
            "parametersJsonSchema": json.loads(json.dumps(dict(tool.parameters))),
        }
        for tool in request.tools
    ]
    search = search_tool(capabilities) if request.web_search is not None else None
    if search is not None and declarations and not capabilities.search_with_functions:
        declarations = []  # search alone: this model refuses both in one request
    tools: list[dict[str, Any]] = [{"functionDeclarations": declarations}] if declarations else []
    if search is not None:
        tools.append(search)
    return tools, bool(search is not None and declarations)


def build_body(request: ChatRequest, capabilities: ModelCapabilities) -> dict[str, Any]:
    """The JSON body of `models/{model}:streamGenerateContent`, in the forms the model takes
    (`capabilities`: its thinking, documents and search tool; see the module docstring)."""
    contents, inline_system = build_contents(request.messages, documents=capabilities.documents == "file")
    body: dict[str, Any] = {"contents": contents}
    system = "\n\n".join(t for t in (request.system, *inline_system) if t)
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    tools, combined = _tools(request, capabilities)
    if tools:
        body["tools"] = tools
    if combined:
        body["toolConfig"] = {"includeServerSideToolInvocations": True}
    config: dict[str, Any] = {}
    if request.max_output_tokens:
        config["maxOutputTokens"] = request.max_output_tokens
    if request.temperature is not None and capabilities.takes_temperature:
        config["temperature"] = request.temperature
    reasoning = capabilities.reasoning
    thinking = thinking_config(request, reasoning) if reasoning is not None else None
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body
