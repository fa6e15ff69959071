"""What the Messages API documents for API version 2026-10-21, as the replay server enforces it.

The pinned anthropic SDK sends `anthropic-version: 2026-10-21` on every request
(anthropic/_constants.py). Anthropic's API versioning page and its migration guide for
2026-10-21 (https://platform.claude.com/docs/en/api/versioning,
https://platform.claude.com/docs/en/api/migration-2026-10-21) name three refusals, each a
400 `invalid_request_error`:

- `temperature`, `top_p` and `top_k` are removed, "even at their default values"; the
  answer is the schema's own ("temperature: Extra inputs are not permitted", as reported
  in public trackers, e.g. ttlequals0/MinusPod release 2.101.10).
- A `document` block placed directly in an `assistant` message.
- A `text` block with a non-empty `citations` array in a `user` message (directly or inside
  a `search_result` block); citations on assistant text and `citations: {"enabled": true}`
  on documents and search results are still accepted.

The guide names these refusals but not their wording, and no public tracker shows it, so
the messages of the last two are this fake's own, in the API's `messages.N.content.M:`
style; the body around them is the API's documented error shape.

And one shaping (`shaped`): from Claude Opus 4.7 on (every model of generation 4.7 or
later, and the Mythos and Fable families) `thinking.display` defaults to "omitted":
thinking blocks stream with empty text and only their signature, unless the request asks
`display: "summarized"` (https://platform.claude.com/docs/en/build-with-claude/thinking,
"Controlling thinking display"; the SDK's ThinkingConfigAdaptiveParam / EnabledParam).

The model's generation is read here on its own, not with the code under test's rules, so
a wrong rule there cannot agree with itself here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.fake_provider_server import Reply, split_events

SAMPLING = ("temperature", "top_p", "top_k")
_OMITTING_FAMILIES = re.compile(r"^claude-(mythos|fable)\b")
_VERSION = re.compile(r"^claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2}))?(?:-|$)")
FIRST_OMITTING = (4, 7)


def error_body(message: str) -> dict[str, Any]:
    """Anthropic's error body for a refused request (400 `invalid_request_error`)."""
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message},
            "request_id": "req_fake_2026_10_21"}


def omits_thinking_by_default(model: str) -> bool:
    """Whether the model streams its thinking empty unless asked to show it."""
    name = model.strip().lower()
    if _OMITTING_FAMILIES.match(name):
        return True
    found = _VERSION.match(name)
    if found is None:
        return False
    major, minor = int(found.group(1)), int(found.group(2) or 0)
    return (major, minor) >= FIRST_OMITTING


def _block_refusal(messages: list[Any]) -> str | None:
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if message.get("role") == "assistant" and block.get("type") == "document":
                return (f"messages.{i}.content.{j}: document blocks are not permitted in assistant "
                        "messages; send documents in user messages")
            if message.get("role") == "user" and _cites(block):
                return (f"messages.{i}.content.{j}: citations are not permitted on text blocks in user "
                        "messages")
    return None


def _cites(block: dict[str, Any]) -> bool:
    """A user text block with citations, directly or inside a search_result block."""
    if block.get("type") == "text":
        return bool(block.get("citations"))
    if block.get("type") == "search_result":
        return any(isinstance(inner, dict) and _cites(inner) for inner in block.get("content") or ())
    return False


def _blanked(event: bytes) -> bytes:
    """One named SSE event with its thinking text emptied (the signature kept)."""
    lines = event.decode().split("\n")
    for k, line in enumerate(lines):
        if not line.startswith("data: "):
            continue
        data = json.loads(line[len("data: "):])
        for holder in (data.get("delta"), data.get("content_block")):
            if isinstance(holder, dict) and holder.get("type") in ("thinking_delta", "thinking"):
                holder["thinking"] = ""
        lines[k] = "data: " + json.dumps(data)
    return "\n".join(lines).encode()


class AnthropicRules:
    """`ProviderRules` for the Messages API at version 2026-10-21 (see the module docstring)."""

    def refusal(self, path: str, body: Any) -> Reply | None:
        if not path.endswith("/messages") or not isinstance(body, dict):
            return None
        for name in SAMPLING:
            if name in body:
                return Reply.error(400, error_body(f"{name}: Extra inputs are not permitted"))
        problem = _block_refusal(body.get("messages") or [])
        return Reply.error(400, error_body(problem)) if problem is not None else None

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        if not path.endswith("/messages") or not isinstance(body, dict) or reply.status != 200:
            return reply
        thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
        if not omits_thinking_by_default(str(body.get("model", ""))) or thinking.get("display") == "summarized":
            return reply
        return reply.with_options(body=b"".join(_blanked(event) for event in split_events(reply.body)))
