"""Build one chat-completions request from a `ChatRequest` (pure, no I/O).

Each provider of the family takes the same wire format but differs in a few fields:
the output-token cap's name, how reasoning is switched on (and for which models:
`reasoning.py`), which reasoning fields must be sent back on an assistant turn that
called tools, how the web is searched natively (`add_web_search`), and who reads a PDF
as a file rather than as its extracted text (`takes_pdf_files`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from providers.continuation import CONTINUE_ASK
from providers.openai_compat.reasoning import add_reasoning, takes_temperature
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
from providers.web_search import is_openai_search_model

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "deepseek": "https://api.deepseek.com",
    "zai": "https://api.z.ai/api/paas/v4",
}
FAMILY: tuple[str, ...] = ("openai", "openrouter", "deepseek", "zai", "custom")

# Providers whose assistant tool-call turns must carry their reasoning back.
REASONING_CONTENT_REPLAY = frozenset({"deepseek", "zai"})


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
    for call in calls:
        value = call.provider_fields.get(key)
        if value:
            return value
    return None


def _assistant(provider: str, message: Message) -> dict[str, Any]:
    text = content_text(message.content)
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = list(message.tool_calls)
    if not calls:
        out["content"] = text
        return out
    out["tool_calls"] = [_tool_call(call, i) for i, call in enumerate(calls)]
    if provider == "openrouter":
        details = _first_field(calls, "reasoning_details")
        if details:
            out["reasoning_details"] = details
    elif provider in REASONING_CONTENT_REPLAY:
        reasoning = _first_field(calls, "reasoning_content")
        if reasoning:
            out["reasoning_content"] = reasoning
    return out


PDF_MEDIA_TYPE = "application/pdf"

# OpenAI models that read a PDF `file` content part on Chat Completions. OpenAI's file
# inputs guide (https://developers.openai.com/api/docs/guides/file-inputs, checked
# 2026-12): Chat Completions takes only PDFs as `file` parts (`file_data` as a base64
# data URL, or an uploaded `file_id`; no `file_url`), read by "models with vision
# capabilities, such as gpt-4o and later models" (the extracted text and an image of
# each page). So: the gpt-4o line (gpt-4o, -mini, chatgpt-4o-latest), gpt-4.1 and 4.5,
# every gpt-5 and later, and the o-series reasoning models from o1 on, but the ones
# without vision (o1-mini, o1-preview, o3-mini). The audio, realtime, transcribe, tts
# and search variants of those lines take no images (so no PDF) on this API. Any other
# or unknown OpenAI model (gpt-4-turbo, gpt-3.5, gpt-oss, ...) gets the document's text.
_OPENAI_FILE_INPUT = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.[1-9]|gpt-[5-9]|o[1-9])($|[-.])")
_OPENAI_FILE_WITHOUT = ("o1-mini", "o1-preview", "o3-mini")
_OPENAI_NO_VISION_WORDS = ("audio", "realtime", "transcribe", "tts", "search")


def openai_takes_files(model: str) -> bool:
    """Whether an OpenAI model reads a PDF `file` content part (its vision models from
    gpt-4o on; see `_OPENAI_FILE_INPUT`)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name.startswith(_OPENAI_FILE_WITHOUT) or any(word in name for word in _OPENAI_NO_VISION_WORDS):
        return False
    return _OPENAI_FILE_INPUT.match(name) is not None


def takes_pdf_files(provider: str, model: str) -> bool:
    """Whether a PDF `DocumentPart` goes to `provider`/`model` as the file itself (a `file`
    content part) rather than as its extracted text.

    - OpenAI: its file-reading models only (`openai_takes_files`).
    - OpenRouter: every model. OpenRouter documents the same `file` part
      (https://openrouter.ai/docs/guides/overview/multimodal/pdfs): a model that reads
      files natively gets the PDF as is; for the others OpenRouter parses it first. No
      `plugins` entry is sent: without one OpenRouter uses the model's native reading
      where it has one and otherwise its default parser ("mistral-ocr", $2 per 1,000
      pages, which also reads scanned PDFs the bot found no text in). Naming an engine
      would either force parsing on models that read PDFs natively or fail on those that
      do not (`native`), and a `file-parser` plugin would have to share `plugins` with
      the `web` search plugin.
    - DeepSeek, Z.ai and custom endpoints: never (they take no file part; the text goes).
    """
    if provider == "openrouter":
        return True
    return provider == "openai" and openai_takes_files(model)


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


def build_messages(provider: str, request: ChatRequest, model: str = "") -> list[dict[str, Any]]:
    """System prompt first, then the history in the family's message shape.

    Chat completions have no prefill (an answer never continues the last assistant
    message), so a partial answer is followed by a user turn asking to go on. A PDF in
    any user turn goes as a file where `takes_pdf_files(provider, model)` says so, as its
    text elsewhere (and in every other role)."""
    files = takes_pdf_files(provider, model)
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "assistant":
            messages.append(_assistant(provider, message))
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


# Pages OpenRouter's `web` plugin puts before the model: its documented default, sent
# explicitly so what one request may cost is fixed ($4 per 1,000 results with Exa).
OPENROUTER_WEB_RESULTS = 5


def searches_here(provider: str, model: str, request: ChatRequest) -> bool:
    """Whether this request carries the provider's own search field: the request asks for
    at least one search and the route searches natively on chat completions (every
    OpenRouter model through the `web` plugin; OpenAI's search models). DeepSeek, Z.ai,
    custom endpoints and OpenAI's other models never get one (the bot's own tool serves
    them)."""
    search = request.web_search
    if search is None or search.max_searches < 1:
        return False
    return provider == "openrouter" or (provider == "openai" and is_openai_search_model(model))


def add_web_search(provider: str, model: str, request: ChatRequest, extra: dict[str, Any]) -> None:
    """Put the native search field in `extra` (extra_body) where `searches_here` says so.

    - OpenRouter: the `web` plugin, `plugins: [{"id": "web", "max_results": 5}]`
      (https://openrouter.ai/docs/guides/features/plugins/web-search). The plugin runs
      one search per request (its docs contrast the newer `openrouter:web_search` server
      tool, where the model chooses how often, with the plugin "always running once per
      request"), so `max_searches` (at least 1 here) always holds. `max_results` bounds
      the pages that one search returns, not searches, so it is not mapped from
      `max_searches`: it stays OpenRouter's default, sent explicitly.
      No `engine`: OpenRouter picks the model's native search (OpenAI, Anthropic,
      Perplexity, xAI) or Exa. The `:online` model suffix is the same plugin, but it
      would change the model id the bot reports and takes no `max_results`, so it is not
      used. OpenRouter now marks the plugin deprecated in favour of that server tool
      (`tools: [{"type": "openrouter:web_search"}]`), which still works as of this writing.
    - OpenAI: `web_search_options: {}` for the search models only
      (https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat); it has no
      bound on searches (only `search_context_size` and `user_location`), so nothing is
      mapped. What these models refuse is left out elsewhere: `temperature`
      (`reasoning.takes_temperature`); of the others they refuse (top_p,
      frequency_penalty, presence_penalty) the bot sends none. Tools go as before: no
      refusal of `tools` by these models is documented.
    """
    if not searches_here(provider, model, request):
        return
    if provider == "openrouter":
        extra["plugins"] = [{"id": "web", "max_results": OPENROUTER_WEB_RESULTS}]
    else:
        extra["web_search_options"] = {}


def build_request(provider: str, model: str, request: ChatRequest, *,
                  custom_reasoning_effort: bool = False) -> dict[str, Any]:
    """Keyword arguments for `chat.completions.create` (streaming, usage included).

    Reasoning goes only where the model takes it (`providers/openai_compat/reasoning.py`);
    a custom endpoint gets `reasoning_effort` only when `custom_reasoning_effort` says so.
    A native web search goes only where `searches_here` says (`add_web_search`); without
    `request.web_search` no search field is sent anywhere.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": build_messages(provider, request, model),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = build_tools(request.tools)
    if request.max_output_tokens is not None:
        # OpenAI's reasoning models refuse `max_tokens`; the rest of the family expects it.
        key = "max_completion_tokens" if provider == "openai" else "max_tokens"
        body[key] = request.max_output_tokens
    if request.temperature is not None and takes_temperature(provider, model):
        body["temperature"] = request.temperature
    extra: dict[str, Any] = {}
    add_reasoning((provider, model), request, body, extra, custom_effort=custom_reasoning_effort)
    add_web_search(provider, model, request, extra)
    extra.update(request.extra)
    if extra:
        body["extra_body"] = extra
    return body


def untyped_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """`build_request`'s arguments with the body in `extra_body`, which the SDK sends as is.

    The SDK walks every typed argument against its annotations before sending (about
    1.5 ms of CPU for a ten-message conversation, more with images), to turn typed
    objects into JSON. Ours is JSON already, so only the arguments that choose the SDK's
    streaming path stay typed; `extra_body` keys replace the placeholders at the top
    level of the body sent."""
    body = {key: value for key, value in arguments.items() if key != "extra_body"}
    body.update(arguments.get("extra_body") or {})
    return {"model": arguments["model"], "messages": [], "stream": True, "extra_body": body}
