"""What the chat-completions providers document about reasoning replay, as the replay server
enforces it (DeepSeek) or checks it (Z.ai).

DeepSeek (https://api-docs.deepseek.com/guides/thinking_mode#tool-calls): thinking mode is
on by default for the models that take the switch (deepseek-v4-*, "Thinking mode is
enabled by default"), unless the request says `thinking: {"type": "disabled"}`;
`deepseek-reasoner` always thinks; `deepseek-chat` thinks only when asked. In thinking
mode an assistant turn that called tools must carry its `reasoning_content` back, or the
request is a 400 ("if your code does not correctly pass back reasoning_content, the API
will return a 400 error"). The key counts, not its text: an empty reasoning goes back
empty. The API's words, as public trackers report them:

- V4 models: "The `reasoning_content` in the thinking mode must be passed back to the
  API." with type and code `invalid_request_error` (JohnnyZ93/oai-compatible-copilot#215,
  crewAIInc/crewAI#5878, borawong/AiMaMi#8);
- deepseek-reasoner: "Missing `reasoning_content` field in the assistant message at
  message index N. For more information, please refer to
  https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
  (abhigyanpatwari/GitNexus#43; only the message was reported, so the body around it is
  the V4 one's shape).

Z.ai (https://docs.z.ai/guides/capabilities/thinking-mode): with interleaved thinking
(GLM-4.5 and later) "thinking blocks should be explicitly preserved and returned together
with the tool results". Z.ai documents no refusal for a turn without them, so the fake
refuses nothing: `ZaiRules.unreplayed` records the assistant tool-call turns a thinking
GLM request sent without `reasoning_content` (their message indices, per request).

OpenRouter deprecated `max_tokens` for `max_completion_tokens` without saying it refuses
the old name, so there is no OpenRouter rule: its tests assert the name the bot sends.
"""

from __future__ import annotations

import re
from typing import Any

from tests.support.fake_provider_server import Reply

REASONING_CONTENT = "reasoning_content"
V4_REFUSED = "The `reasoning_content` in the thinking mode must be passed back to the API."
REASONER_REFUSED = ("Missing `reasoning_content` field in the assistant message at message index {index}. "
                    "For more information, please refer to "
                    "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls")
_GLM_THINKING = re.compile(r"^glm-(4\.[5-9]|[5-9])")


def deepseek_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None,
                      "code": "invalid_request_error"}}


def _own_name(body: dict[str, Any]) -> str | None:
    """The model as the provider's own API names it; None for a router's `vendor/model` id
    (OpenRouter's, whose replay form is its own): these rules are DeepSeek's and Z.ai's."""
    name = str(body.get("model", "")).strip().lower()
    return None if "/" in name else name


def _switch(body: dict[str, Any]) -> str | None:
    thinking = body.get("thinking")
    return thinking.get("type") if isinstance(thinking, dict) else None


def unreplayed_turns(body: dict[str, Any]) -> list[int]:
    """Indices of the assistant messages that called tools without `reasoning_content`."""
    return [i for i, message in enumerate(body.get("messages") or ())
            if isinstance(message, dict) and message.get("role") == "assistant"
            and message.get("tool_calls") and REASONING_CONTENT not in message]


def deepseek_thinks(body: dict[str, Any]) -> bool:
    """Whether DeepSeek serves this request in thinking mode (see the module docstring)."""
    name, switch = _own_name(body) or "", _switch(body)
    if name == "deepseek-reasoner":
        return True
    if name == "deepseek-chat":
        return switch == "enabled"
    return name.startswith("deepseek") and switch != "disabled"


def _chat(path: str, body: Any) -> bool:
    return path.endswith("/chat/completions") and isinstance(body, dict)


class DeepSeekRules:
    """`ProviderRules`: DeepSeek's refusal of a tool-call turn without its reasoning."""

    def refusal(self, path: str, body: Any) -> Reply | None:
        if not _chat(path, body) or not deepseek_thinks(body):
            return None
        missing = unreplayed_turns(body)
        if not missing:
            return None
        if _own_name(body) == "deepseek-reasoner":
            return Reply.error(400, deepseek_error(REASONER_REFUSED.format(index=missing[0])))
        return Reply.error(400, deepseek_error(V4_REFUSED))

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        return reply


class ZaiRules:
    """`ProviderRules` that checks (never refuses) Z.ai's preserved thinking on tool turns."""

    def __init__(self) -> None:
        self.unreplayed: list[list[int]] = []

    def refusal(self, path: str, body: Any) -> Reply | None:
        if _chat(path, body) and _GLM_THINKING.match(_own_name(body) or "") and _switch(body) != "disabled":
            self.unreplayed.append(unreplayed_turns(body))
        return None

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        return reply
