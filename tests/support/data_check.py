"""Replies for the route checks (`bot/check`), chosen by what each request asks.

The checks send their requests at once, so the replay server's `chooser` reads each
body and answers the check it belongs to (a tool result, a declared tool, a search
tool, thinking, an image, a PDF, else plain text), in the family's own wire format:
Anthropic's named SSE events, Gemini's `alt=sse` payloads, or chat-completions chunks
for a custom endpoint.
`fail` replaces one check's reply (e.g. the image request answered with a 400).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.check.probes import CHECK_TOOL, TOOL_WORD, CheckName
from bot.check.samples import DOCUMENT_WORD
from tests.support.data_anthropic import (
    a_text_block,
    a_thinking_block,
    a_tool_block,
    anthropic_events,
)
from tests.support.data_anthropic_search import search_stream
from tests.support.data_gemini import GEMINI_SIG_A, GEMINI_THINK_TEXT, g_chunk, gemini_body
from tests.support.data_gemini_search import GEMINI_GROUNDED
from tests.support.data_openai import chunk, openai_events, tool_delta, usage_chunk
from tests.support.fake_provider_server import Reply

# Anthropic's own 400 for an image it cannot read, as public trackers quote it
# (anthropics/claude-code issues #8647, #15941).
IMAGE_REFUSED = {"type": "error", "error": {"type": "invalid_request_error", "message": "Could not process image"}}

ANSWERS: dict[CheckName, str] = {
    "text": "Ready.", "tools": f"The word is {TOOL_WORD}.", "reasoning": "No.", "image": "Red.",
    "document": DOCUMENT_WORD.title() + ".",
}


def _blocks(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [block for message in body.get("messages", []) if isinstance(message.get("content"), list)
            for block in message["content"] if isinstance(block, dict)]


def anthropic_check(body: Mapping[str, Any]) -> CheckName:
    """Which check an Anthropic Messages request belongs to."""
    types = {block.get("type") for block in _blocks(body)}
    tools = body.get("tools") or []
    if "tool_result" in types or any(tool.get("name") == CHECK_TOOL for tool in tools):
        return "tools"
    if any(str(tool.get("type", "")).startswith("web_search") for tool in tools):
        return "web_search"
    if "thinking" in body:
        return "reasoning"
    if "image" in types:
        return "image"
    return "document" if "document" in types else "text"


def anthropic_reply(body: Mapping[str, Any]) -> Reply:
    """A healthy Claude's answer to the check `body` belongs to."""
    check = anthropic_check(body)
    if check == "web_search":
        return Reply.named_sse(search_stream())
    if check == "tools" and "tool_result" not in {block.get("type") for block in _blocks(body)}:
        return Reply.named_sse(anthropic_events([a_tool_block(0, "toolu_check", CHECK_TOOL, ["{}"])], "tool_use", 12))
    if check == "reasoning":
        blocks = [a_thinking_block(0, ["91 is 7 times 13, ", "so not prime."], "EqQBCkYcheck=="),
                  a_text_block(1, [ANSWERS["reasoning"]])]
        return Reply.named_sse(anthropic_events(blocks, "end_turn", 30))
    return Reply.named_sse(anthropic_events([a_text_block(0, [ANSWERS[check]])], "end_turn", 4))


class AnthropicChecks:
    """The replay server's chooser for a Claude route; `fail` answers some checks otherwise."""

    def __init__(self, fail: Mapping[CheckName, Reply] | None = None) -> None:
        self.fail = dict(fail or {})
        self.asked: list[CheckName] = []

    def __call__(self, path: str, body: Any) -> Reply | None:
        if path != "/v1/messages" or not isinstance(body, dict):
            return None
        check = anthropic_check(body)
        self.asked.append(check)
        return self.fail.get(check) or anthropic_reply(body)


def chat_check(body: Mapping[str, Any]) -> CheckName:
    """Which check a chat-completions request belongs to (a custom endpoint's)."""
    parts = [part for message in body.get("messages", []) if isinstance(message.get("content"), list)
             for part in message["content"]]
    if any(message.get("role") == "tool" for message in body.get("messages", [])) or body.get("tools"):
        return "tools"
    return "image" if any(part.get("type") == "image_url" for part in parts) else "text"


def chat_reply(body: Mapping[str, Any]) -> Reply:
    """A healthy chat-completions model's answer to the check `body` belongs to."""
    check = chat_check(body)
    if check == "tools" and not any(message.get("role") == "tool" for message in body["messages"]):
        return Reply.sse([chunk({"role": "assistant", "content": None,
                                 "tool_calls": [tool_delta(0, id="call_check", name=CHECK_TOOL, arguments="{}")]}),
                          chunk({}, "tool_calls"), usage_chunk(20, 5)])
    return Reply.sse(openai_events([ANSWERS[check]]))


def _parts(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [part for content in body.get("contents", []) for part in content.get("parts", [])]


def gemini_check(body: Mapping[str, Any]) -> CheckName:
    """Which check a Gemini generateContent request belongs to."""
    parts, tools = _parts(body), body.get("tools") or []
    if any("functionResponse" in part for part in parts) or any("functionDeclarations" in tool for tool in tools):
        return "tools"
    if any("googleSearch" in tool for tool in tools):
        return "web_search"
    if "thinkingConfig" in body.get("generationConfig", {}):
        return "reasoning"
    mimes = {part["inlineData"]["mimeType"] for part in parts if "inlineData" in part}
    return "image" if "image/png" in mimes else "document" if "application/pdf" in mimes else "text"


GEMINI_USAGE = {"promptTokenCount": 20, "candidatesTokenCount": 3, "totalTokenCount": 23}


def gemini_reply(body: Mapping[str, Any]) -> Reply:
    """A healthy Gemini's answer to the check `body` belongs to."""
    check = gemini_check(body)
    if check == "web_search":
        return Reply(body=GEMINI_GROUNDED)
    if check == "tools" and not any("functionResponse" in part for part in _parts(body)):
        call = {"functionCall": {"name": CHECK_TOOL, "args": {}}, "thoughtSignature": GEMINI_SIG_A}
        return Reply(body=gemini_body([g_chunk([call], "STOP", GEMINI_USAGE)]))
    if check == "reasoning":
        return Reply(body=GEMINI_THINK_TEXT)
    return Reply(body=gemini_body([g_chunk([{"text": ANSWERS[check]}], "STOP", GEMINI_USAGE)]))


class GeminiChecks:
    """The replay server's chooser for a Gemini route (see `AnthropicChecks`)."""

    def __init__(self, fail: Mapping[CheckName, Reply] | None = None) -> None:
        self.fail = dict(fail or {})
        self.asked: list[CheckName] = []

    def __call__(self, path: str, body: Any) -> Reply | None:
        if ":streamGenerateContent" not in path or not isinstance(body, dict):
            return None
        check = gemini_check(body)
        self.asked.append(check)
        return self.fail.get(check) or gemini_reply(body)
