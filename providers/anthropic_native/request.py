"""Build the Messages API arguments from a ChatRequest (pure, no I/O).

The SDK serializes these keyword arguments; this module only decides their content:
system prompt, alternating turns with tool_use / tool_result blocks, tool schemas,
max_tokens (required by the API), extended thinking with signed thinking blocks
replayed ahead of the tool calls they led to, and Anthropic's web search server tool
when the request asks to search (`ChatRequest.web_search`).

Documents (`DocumentPart`): a PDF is a base64 `document` block titled with its file name
(https://platform.claude.com/docs/en/build-with-claude/pdf-support; the block's shape,
`title` 1-500 characters, from the Messages API reference). It keeps its place in the
turn: the guide's examples put the document before the question, and the bot's user turn
already carries its files ahead of the prompt (bot/capabilities/reading/attachments.py). A model
without PDF input (`capabilities.takes_documents`), and any document that is not a PDF, gets the
extracted text instead (`providers.types.part_text`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from providers.continuation import CONTINUE_ASK, ends_with_partial_answer
from providers.effort import DEFAULT_BUDGETS, effort_for_budget
from providers.model_capabilities import ModelCapabilities
from providers.speaker import with_speaker
from providers.types import (
    ChatRequest,
    ContentPart,
    DocumentPart,
    FunctionCall,
    ImagePart,
    Message,
    WebSearch,
    content_parts,
    content_text,
    part_text,
)

DEFAULT_MAX_TOKENS = 4096
# The API refuses budgets under 1024 tokens and requires max_tokens > budget_tokens.
MIN_THINKING_BUDGET = 1024
EFFORT_BUDGETS = DEFAULT_BUDGETS
# FunctionCall.provider_fields key holding the signed thinking blocks to send back.
THINKING_BLOCKS = "anthropic_thinking_blocks"
# Anthropic's web search server tool: the API runs the searches itself and the answer
# cites the pages it read (https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool).
# web_search_20250305, not the newer web_search_20260209: that one filters results with
# code execution on Opus/Sonnet 4.6 only (more server blocks, longer turns that pause),
# while 20250305 is documented on every model that searches and needs no beta header.
WEB_SEARCH_TOOL_TYPE = "web_search_20250305"
WEB_SEARCH_TOOL_NAME = "web_search"
PDF_MEDIA_TYPE = "application/pdf"  # the one media type a base64 document source takes
MAX_DOCUMENT_TITLE = 500  # characters: the API refuses a longer `title`


def thinking_budget(request: ChatRequest) -> int | None:
    """The thinking budget asked for, if any (an explicit budget wins over an effort)."""
    if request.thinking_budget is not None:
        return max(MIN_THINKING_BUDGET, int(request.thinking_budget)) if request.thinking_budget > 0 else None
    if request.reasoning_effort:
        return EFFORT_BUDGETS.get(request.reasoning_effort.lower())
    return None


def _tool_use_block(call: FunctionCall, index: int) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call.id or f"toolu_replay_{index}",
        "name": call.name,
        "input": dict(call.args),
    }


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    """Thinking that led to the first call opens the turn (the API requires it when
    thinking is on), then the text, then each call preceded by its own later thinking."""
    blocks: list[dict[str, Any]] = []
    calls = list(message.tool_calls)
    if calls:
        blocks.extend(dict(b) for b in calls[0].provider_fields.get(THINKING_BLOCKS, ()))
    text = content_text(message.content)
    if text:
        blocks.append({"type": "text", "text": text})
    for i, call in enumerate(calls):
        if i:
            blocks.extend(dict(b) for b in call.provider_fields.get(THINKING_BLOCKS, ()))
        blocks.append(_tool_use_block(call, i))
    return blocks


def _tool_result_block(message: Message) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id or "",
        "content": content_text(message.content),
    }


def _document_block(part: DocumentPart) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "document",
                             "source": {"type": "base64", "media_type": PDF_MEDIA_TYPE, "data": part.base64()}}
    title = part.filename.strip()[:MAX_DOCUMENT_TITLE]
    if title:
        block["title"] = title
    return block


def _user_block(part: ContentPart, documents: bool) -> dict[str, Any] | None:
    """One user content block: an image; a PDF as a `document` block for a model that reads
    `documents`, else (and any other document) its extracted text, or nothing (None) when it
    has none: the bot's note already says so, and the API refuses an empty text block."""
    if isinstance(part, ImagePart):
        return {"type": "image",
                "source": {"type": "base64", "media_type": part.media_type, "data": part.base64()}}
    if isinstance(part, DocumentPart):
        if documents and part.media_type == PDF_MEDIA_TYPE:
            return _document_block(part)
        text = part_text(part)
        return {"type": "text", "text": text} if text else None
    return {"type": "text", "text": part.text}


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Merge consecutive same-role turns: the API expects user and assistant to alternate."""
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _strip_prefill(turns: list[dict[str, Any]]) -> None:
    """Strip the final assistant turn's trailing whitespace: the API refuses a prefill
    that ends with any. The cost: a space or newline at the seam may be lost (the model
    usually writes it again at the start of its continuation). A turn left empty goes."""
    turn = turns[-1]
    if turn["role"] != "assistant" or turn["content"][-1].get("type") != "text":
        return
    text = turn["content"][-1]["text"].rstrip()
    if text:
        turn["content"][-1] = {**turn["content"][-1], "text": text}
        return
    turn["content"].pop()
    if not turn["content"]:
        turns.pop()


def build_messages(messages: Sequence[Message], *, prefill: bool = True,
                   documents: bool = True) -> tuple[list[dict[str, Any]], list[str]]:
    """Turns for the API and any system texts found inside the history; a PDF in a user
    turn goes as a `document` block when the model reads `documents`, else as its text.

    A partial answer (`Message.partial_answer`) is continued by a prefill when `prefill`
    says the model takes one (the turns end with it); otherwise a user turn after it asks
    to go on, as in the OpenAI-compatible family."""
    turns: list[dict[str, Any]] = []
    system_texts: list[str] = []
    for message in messages:
        if message.role == "system":
            if message.content:
                system_texts.append(content_text(message.content))
        elif message.role == "assistant":
            _append(turns, "assistant", _assistant_blocks(message))
            if message.partial_answer and not prefill:
                _append(turns, "user", [{"type": "text", "text": CONTINUE_ASK}])
        elif message.role == "tool":
            _append(turns, "user", [_tool_result_block(message)])
        elif message.content:
            content = with_speaker(message.content, message.name)  # the speaker, as a prefix
            blocks = [_user_block(part, documents) for part in content_parts(content)]
            _append(turns, "user", [block for block in blocks if block is not None])
    if prefill and turns and ends_with_partial_answer(messages):
        _strip_prefill(turns)
    return turns, system_texts


def web_search_tool(search: WebSearch) -> dict[str, Any]:
    """The server tool, at most `max_searches` searches per response (`max_uses`; the API
    takes at least 1; a search past it comes back as a `max_uses_exceeded` error result)."""
    return {"type": WEB_SEARCH_TOOL_TYPE, "name": WEB_SEARCH_TOOL_NAME, "max_uses": max(1, int(search.max_searches))}


def _tools(request: ChatRequest, capabilities: ModelCapabilities) -> list[dict[str, Any]]:
    """The function tools, and the web search server tool next to them when the request
    searches and the model takes it (a model that does not answers without searching).
    Tool names must be unique: with native search on, a function tool of the same name
    (the bot's own search) gives way to it."""
    search = request.web_search if capabilities.web_search is not None else None
    tools = [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": json.loads(json.dumps(dict(tool.parameters))),
        }
        for tool in request.tools
        if search is None or tool.name != WEB_SEARCH_TOOL_NAME
    ]
    if search is not None:
        tools.append(web_search_tool(search))
    return tools


def _thinking(arguments: dict[str, Any], capabilities: ModelCapabilities, budget: int) -> None:
    """The thinking the model takes, in its form; adaptive thinking asks its summary shown
    (`display: "summarized"`: from Opus 4.7 on the default is "omitted", empty blocks)."""
    reasoning = capabilities.reasoning
    if reasoning is None or reasoning.form == "budget":
        arguments["thinking"] = {"type": "enabled", "budget_tokens": budget}
        return
    arguments["thinking"] = {"type": "adaptive"}
    if reasoning.summarized:
        arguments["thinking"]["display"] = "summarized"
    arguments["output_config"] = {"effort": effort_for_budget(budget, EFFORT_BUDGETS)}


def build_arguments(request: ChatRequest, capabilities: ModelCapabilities) -> dict[str, Any]:
    """Keyword arguments for `client.messages.create(..., stream=True)`, in the forms the
    model takes (`capabilities`: its thinking, prefill, documents and web search). No
    sampling parameter goes: API version 2026-10-21 refuses them all
    (`providers/anthropic_native/capabilities.py`), and where a model took one again
    (`ModelCapabilities.sampling`) thinking still takes only the default."""
    budget = thinking_budget(request) if capabilities.reasoning is not None else None
    # A thinking request continues an answer in the OpenAI-compatible form (capabilities.py).
    prefill = capabilities.continuation == "prefill" and budget is None
    turns, inline_system = build_messages(request.messages, prefill=prefill,
                                          documents=capabilities.documents == "file")
    system = "\n\n".join(t for t in (request.system, *inline_system) if t)
    max_tokens = request.max_output_tokens or DEFAULT_MAX_TOKENS
    arguments: dict[str, Any] = {"model": capabilities.model, "messages": turns}
    if budget is not None:
        if max_tokens <= budget:  # thinking counts toward max_tokens: leave room for the answer
            max_tokens = budget + (request.max_output_tokens or DEFAULT_MAX_TOKENS)
        _thinking(arguments, capabilities, budget)
    elif request.temperature is not None and capabilities.takes_temperature:
        arguments["extra_body"] = {"temperature": request.temperature}  # the SDK has no argument for it
    arguments["max_tokens"] = max_tokens
    if system:
        arguments["system"] = system
    tools = _tools(request, capabilities)
    if tools:
        arguments["tools"] = tools
    return arguments
