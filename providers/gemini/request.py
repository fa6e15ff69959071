"""Build the generateContent request body from a ChatRequest (pure, no I/O).

The body is the documented REST shape (camelCase) that the SDK's own converters
produce; the SDK's api client then adds the URL, API version, key header and sends it.
History becomes `user` / `model` turns; an assistant turn that called tools replays
each `functionCall` part with its own `thoughtSignature` (Gemini rejects a replayed
call whose signature is missing), and tool results become `functionResponse` parts in
one user turn.

Web search (`ChatRequest.web_search`) is Grounding with Google Search, in the form the
model takes (`search_tool`, `search_mixes_with_functions`):

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
(`takes_documents`), so they read its extracted text (`providers.types.part_text`); so
does every model for a document of any other media type. Which models take images needs
no check here: every model this family serves takes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from providers.speaker import with_speaker
from providers.types import (
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
EFFORT_BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
# Models without thinking, which refuse a `thinkingConfig` (400): Gemini 1.x, the 2.0
# models (but the experimental 2.0 "thinking" ones) and the open Gemma models served by
# the same API. Thinking came with Gemini 2.5 and every model since (3.x takes the
# budget too), so any other name, a newer one included, is sent the thinking it asks for.
_WITHOUT_THINKING = re.compile(r"^(models/)?(gemini-1\.|gemini-2\.0-(?!.*thinking)|gemma-)")
# Web search forms by model family (see the module docstring).
_LEGACY_SEARCH = re.compile(r"^(models/)?gemini-1\.")  # googleSearchRetrieval
_NO_SEARCH = re.compile(r"^(models/)?gemma-")
_SEARCH_ALONE = re.compile(r"^(models/)?gemini-[12]\.")  # no search tool next to function declarations
# Models without document input (see the module docstring): Gemma. Every Gemini name, a
# newer one included, takes a PDF inline.
_NO_DOCUMENTS = re.compile(r"^(models/)?gemma-")
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
    if isinstance(part, ImagePart):
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
            text = content_text(message.content)
            parts: list[dict[str, Any]] = [{"text": text}] if text else []
            for call in message.tool_calls:
                if call.id:
                    names_by_id[call.id] = call.name
                parts.append(_call_part(call))
            _append(contents, "model", parts)
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


def takes_documents(model: str) -> bool:
    """Whether the model reads a PDF itself (see `_NO_DOCUMENTS`); else it reads its text."""
    return _NO_DOCUMENTS.match(model.strip().lower()) is None


def takes_thinking(model: str) -> bool:
    """Whether the model accepts a thinking configuration (see `_WITHOUT_THINKING`)."""
    return _WITHOUT_THINKING.match(model.strip().lower()) is None


def thinking_config(request: ChatRequest) -> dict[str, Any] | None:
    """Thinking with thought summaries when reasoning was asked for."""
    if request.thinking_budget is not None:
        return {"thinkingBudget": int(request.thinking_budget), "includeThoughts": request.thinking_budget != 0}
    if request.reasoning_effort:
        budget = EFFORT_BUDGETS.get(request.reasoning_effort.lower())
        if budget is not None:
            return {"thinkingBudget": budget, "includeThoughts": True}
    return None


def search_tool(model: str) -> dict[str, Any] | None:
    """The tool that grounds `model` on Google Search; None for a model without one (Gemma)."""
    name = model.strip().lower()
    if _NO_SEARCH.match(name):
        return None
    if _LEGACY_SEARCH.match(name):
        return {"googleSearchRetrieval": {"dynamicRetrievalConfig": {"mode": "MODE_DYNAMIC"}}}
    return {"googleSearch": {}}


def search_mixes_with_functions(model: str) -> bool:
    """Whether `model` takes its search tool next to function declarations (Gemini 3.x and
    later); Gemini 1.x and 2.x do not, so their request with search carries search alone."""
    return _SEARCH_ALONE.match(model.strip().lower()) is None


def _tools(request: ChatRequest, model: str) -> tuple[list[dict[str, Any]], bool]:
    """The body's `tools`, and whether search rides next to function declarations."""
    declarations = [
        {
            "name": tool.name,
            "description": tool.description,
            "parametersJsonSchema": json.loads(json.dumps(dict(tool.parameters))),
        }
        for tool in request.tools
    ]
    search = search_tool(model) if request.web_search is not None else None
    if search is not None and declarations and not search_mixes_with_functions(model):
        declarations = []  # search alone: this model refuses both in one request
    tools: list[dict[str, Any]] = [{"functionDeclarations": declarations}] if declarations else []
    if search is not None:
        tools.append(search)
    return tools, bool(search is not None and declarations)


def build_body(request: ChatRequest, model: str) -> dict[str, Any]:
    """The JSON body of `models/{model}:streamGenerateContent` (thinking only for a
    `model` that takes it; the search tool in the form `model` takes, see the module)."""
    contents, inline_system = build_contents(request.messages, documents=takes_documents(model))
    body: dict[str, Any] = {"contents": contents}
    system = "\n\n".join(t for t in (request.system, *inline_system) if t)
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    tools, combined = _tools(request, model)
    if tools:
        body["tools"] = tools
    if combined:
        body["toolConfig"] = {"includeServerSideToolInvocations": True}
    config: dict[str, Any] = {}
    if request.max_output_tokens:
        config["maxOutputTokens"] = request.max_output_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    thinking = thinking_config(request) if takes_thinking(model) else None
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body
