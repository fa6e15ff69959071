"""What the Gemini API documents about thinking and tool context, as the replay server enforces it.

Refusals (`refusal`), each a 400 in Google's error shape
(`{"error": {"code": 400, "message": …, "status": "INVALID_ARGUMENT"}}`):

- `thinkingLevel` on a model before Gemini 3. Google's thinking guide: "If you use the
  thinking_level parameter with a model earlier than Gemini 3, the model returns an
  error"; the API's words, "Thinking level is not supported for this model.", as public
  trackers report them (RooCodeInc/Roo-Code#10700, microsoft/vscode#334581,
  ziya-ai/ziya#52, all on Gemini 2.5).
- `thinkingBudget` on Gemini 3.5 and later. The google-genai SDK's own note
  (types.py, `ReinforcementTuningThinkingLevel`): "Starting from Gemini 3.5 models, the
  old thinking_budget will no longer be supported and will result in a user error if
  set." No public tracker shows the API's words for it, so this message is the fake's
  own. (Trackers show some 3.6-3.8 Flash models still taking a zero budget: this fake is
  stricter than those reports, and the bot sends levels there anyway.)

A check, not a refusal (`circulation`): with Google Search next to function declarations
(`toolConfig.includeServerSideToolInvocations`), Gemini 3 streams the search it ran as
`toolCall` / `toolResponse` parts, each with its `thoughtSignature`, and Google's
tool-combination guide says to "return all parts exactly as received in subsequent
requests" (the model turn of the next round, the server-side parts before the
`functionCall` they led to). The guide does not say what the API answers when they are
missing, so the fake refuses nothing for it: it remembers the server-side parts of each
reply that ended with a function call, and `circulation` records, for the next request,
whether its last model turn carries them back in order, signatures included.

The model's generation is read here on its own, not with the code under test's rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tests.support.fake_provider_server import Reply, split_events

_MODEL = re.compile(r"/models/([^/:]+):(?:stream)?[Gg]enerateContent$")
_VERSION = re.compile(r"^gemini-(\d+)(?:\.(\d+))?")
FIRST_LEVEL = (3, 0)
FIRST_WITHOUT_BUDGET = (3, 5)
LEVEL_REFUSED = "Thinking level is not supported for this model."
BUDGET_REFUSED = "Thinking budget is not supported for this model. Use thinking level instead."
SERVER_PART_KEYS = ("toolCall", "toolResponse")


def error_body(message: str) -> dict[str, Any]:
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def model_version(path: str) -> tuple[int, int] | None:
    """(major, minor) of the model a generateContent path names; None without one."""
    found = _MODEL.search(path)
    version = _VERSION.match(found.group(1).lower()) if found else None
    return (int(version.group(1)), int(version.group(2) or 0)) if version else None


def is_server_part(part: Any) -> bool:
    return isinstance(part, dict) and any(key in part for key in SERVER_PART_KEYS)


def served_parts(body: bytes) -> list[dict[str, Any]]:
    """Every part the model streamed in a `alt=sse` body, in order."""
    parts: list[dict[str, Any]] = []
    for event in split_events(body):
        for line in event.decode().splitlines():
            if not line.startswith("data:"):
                continue
            payload = json.loads(line[len("data:"):])
            for candidate in (payload.get("candidates") or [])[:1]:
                parts.extend((candidate.get("content") or {}).get("parts") or ())
    return parts


def _sequence(parts: list[Any]) -> list[Any]:
    """The server-side parts whole and each function call by name and arguments, in order:
    what a model turn must carry back, and where."""
    out: list[Any] = []
    for part in parts:
        if is_server_part(part):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            out.append(("functionCall", call.get("name"), call.get("args") or {}))
    return out


@dataclass
class Circulation:
    """One follow-up request checked against the reply before it: the server-side parts and
    function calls that reply served, and what the request's last model turn carried back."""

    served: list[Any]
    echoed: list[Any]

    @property
    def kept(self) -> bool:
        """Every server-side part back, exactly as served and in its place before the call it
        led to."""
        return self.echoed == self.served


class GeminiRules:
    """`ProviderRules` for the Gemini API's thinking and tool context (see the module docstring)."""

    def __init__(self) -> None:
        self.circulation: list[Circulation] = []
        self._pending: list[dict[str, Any]] = []

    def refusal(self, path: str, body: Any) -> Reply | None:
        version = model_version(path)
        if not isinstance(body, dict) or "enerateContent" not in path:
            return None
        self._check_circulation(body)
        config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
        if version is not None and "thinkingLevel" in config and version < FIRST_LEVEL:
            return Reply.error(400, error_body(LEVEL_REFUSED))
        if version is not None and "thinkingBudget" in config and version >= FIRST_WITHOUT_BUDGET:
            return Reply.error(400, error_body(BUDGET_REFUSED))
        return None

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        if "enerateContent" in path and reply.status == 200 and reply.trickle is None:
            parts = served_parts(reply.body)
            calls = any(isinstance(part, dict) and "functionCall" in part for part in parts)
            self._pending = _sequence(parts) if calls and any(map(is_server_part, parts)) else []
        return reply

    def _check_circulation(self, body: dict[str, Any]) -> None:
        served, self._pending = self._pending, []
        if not served:
            return
        models = [content for content in body.get("contents") or () if content.get("role") == "model"]
        parts = (models[-1].get("parts") or []) if models else []
        self.circulation.append(Circulation(served, _sequence(parts)))
