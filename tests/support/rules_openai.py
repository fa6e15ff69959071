"""What OpenAI documents or is reported to refuse, enforced by the replay server
(`ProviderRules`, tests/support/fake_provider_server.py), with OpenAI's own error bodies.

Each refusal below is worded as OpenAI answers it, as reported in public trackers:

- Chat Completions, function tools next to a reasoning effort, from gpt-5.4 on:
  pipecat-ai/pipecat#4043 (gpt-5.4: "... in /v1/chat/completions. Please use
  /v1/responses instead."), GoogleChromeLabs/webmcp-tools#417 and Wei-Shaw/sub2api#6740
  (gpt-5.6-terra, gpt-6-astra: "... To use function tools, use /v1/responses or set
  reasoning_effort to 'none'."); param `reasoning_effort`, code null. From gpt-5.6 on an
  absent effort is the model's default reasoning and refused too (laurent22/joplin#16451,
  huggingface/speech-to-speech#490); gpt-5.4 and 5.5 default to "none".
- Responses, stateless replay (`store: false`): a reasoning item the request does not
  carry whole (no `encrypted_content`) is looked up in storage and not found
  (vercel/ai#7543, router-for-me/CLIProxyAPI#2381: "Item with id 'rs_…' not found. Items
  are not persisted when `store` is set to false. …", param `input`; the status was 404
  where a report shows it, can1357/oh-my-pi#41); a reasoning item must be followed by
  the item it led to (continuedev/continue#8933, 400: "Item 'rs_…' of type 'reasoning'
  was provided without its required following item."); a `function_call_output` needs
  its `function_call` in the same input (continuedev/continue#10092, 400: "No tool call
  found for function call output with call_id …").
- Responses, an output cap under 16 (vectorize-io/hindsight#58, 400: "Invalid
  'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10
  instead.", code `integer_below_min_value`).
- Responses, a reasoning model refuses `temperature` (vercel/ai's recorded body,
  tests/fixtures/openai_responses/reasoning_model_temperature_error.json).
- Responses, an organization that is not verified may not ask for reasoning summaries
  (continuedev/continue#9854, 400, param `reasoning.summary`, code `unsupported_value`).

`ResponsesRules.shaped` streams what the request asked for: reasoning summaries only
when `reasoning.summary` was set, encrypted reasoning only when `include` asked for it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.support.fake_provider_server import Reply, split_events

TEMPERATURE_REFUSAL = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "openai_responses"
     / "reasoning_model_temperature_error.json").read_text())
_VERSION = re.compile(r"^gpt-(\d+)(?:\.(\d+))?(?:$|[-.])")
_REASONING = re.compile(r"^(o\d+|gpt-(?:[5-9]|\d{2,})|gpt-oss)($|[-.])")
OUTPUT_ITEMS = frozenset({"function_call", "message", "web_search_call", "custom_tool_call"})


def own_name(model: Any) -> str:
    return str(model or "").strip().lower().rsplit("/", 1)[-1]


def version(model: Any) -> tuple[int, int] | None:
    """(major, minor) of a gpt-N.M name; None for any other name."""
    found = _VERSION.match(own_name(model))
    return (int(found.group(1)), int(found.group(2) or 0)) if found else None


def invalid_request(message: str, param: str | None, *, status: int = 400, code: str | None = None) -> Reply:
    return Reply.error(status, {"error": {"message": message, "type": "invalid_request_error", "param": param,
                                          "code": code}})


def has_function_tools(body: dict[str, Any]) -> bool:
    return any(isinstance(tool, dict) and tool.get("type") == "function" for tool in body.get("tools") or ())


@dataclass(frozen=True)
class ChatCompletionsToolsWithReasoning:
    """OpenAI's newer models take function tools on Chat Completions only without reasoning."""

    def refusal(self, path: str, body: Any) -> Reply | None:
        if not path.endswith("/chat/completions") or not isinstance(body, dict) or not has_function_tools(body):
            return None
        model = own_name(body.get("model"))
        found = version(model)
        if found is None or found < (5, 4) or "chat" in model:
            return None
        effort = body.get("reasoning_effort")
        newer = found >= (5, 6)
        if effort == "none" or (effort is None and not newer):
            return None
        advice = ("To use function tools, use /v1/responses or set reasoning_effort to 'none'." if newer
                  else "Please use /v1/responses instead.")
        return invalid_request(f"Function tools with reasoning_effort are not supported for {model} in "
                               f"/v1/chat/completions. {advice}", "reasoning_effort")

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        return reply


def _replay_refusal(items: list[Any], stored: bool) -> Reply | None:
    """The first refusal of OpenAI's input checks (see the module docstring), None when none."""
    calls: set[str] = set()
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            ident = item.get("id", "")
            if not stored and not item.get("encrypted_content"):
                return invalid_request(
                    f"Item with id '{ident}' not found. Items are not persisted when `store` is set to false. "
                    "Try again with `store` set to true, or remove this item from your input.", "input",
                    status=404)
            following = items[position + 1] if position + 1 < len(items) else None
            follows = isinstance(following, dict) and (
                following.get("type", "message") in OUTPUT_ITEMS
                and following.get("role", "assistant") == "assistant")
            if not follows:
                return invalid_request(f"Item '{ident}' of type 'reasoning' was provided without its required "
                                       "following item.", "input")
        elif kind == "function_call":
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output" and str(item.get("call_id")) not in calls:
            return invalid_request(f"No tool call found for function call output with call_id "
                                   f"{item.get('call_id')}.", "input")
    return None


@dataclass(frozen=True)
class ResponsesRules:
    """The Responses API's checks of the input and of what a model takes; with
    `verified=False` the organization may not ask for reasoning summaries."""

    verified: bool = True

    def refusal(self, path: str, body: Any) -> Reply | None:
        if not path.endswith("/responses") or not isinstance(body, dict):
            return None
        reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else {}
        if not self.verified and "summary" in reasoning:
            return invalid_request(
                "Your organization must be verified to generate reasoning summaries. Please go to: "
                "https://platform.openai.com/settings/organization/general and click on Verify Organization. "
                "If you just verified, it can take up to 15 minutes for access to propagate.",
                "reasoning.summary", code="unsupported_value")
        cap = body.get("max_output_tokens")
        if isinstance(cap, int) and cap < 16:
            return invalid_request(f"Invalid 'max_output_tokens': integer below minimum value. Expected a value "
                                   f">= 16, but got {cap} instead.", "max_output_tokens",
                                   code="integer_below_min_value")
        if (body.get("temperature") is not None and _REASONING.match(own_name(body.get("model")))
                and "chat" not in own_name(body.get("model")) and reasoning.get("effort") != "none"):
            return Reply.error(400, TEMPERATURE_REFUSAL)
        items = body.get("input")
        if isinstance(items, list):
            return _replay_refusal(items, stored=body.get("store") is not False)
        return None

    def shaped(self, path: str, body: Any, reply: Reply) -> Reply:
        """Summaries only when asked for, encrypted reasoning only when included."""
        if not path.endswith("/responses") or not isinstance(body, dict) or reply.status != 200 or not reply.body:
            return reply
        reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else {}
        summaries = "summary" in reasoning
        encrypted = "reasoning.encrypted_content" in (body.get("include") or ())
        if summaries and encrypted:
            return reply
        events = [_shaped_event(event, summaries, encrypted) for event in split_events(reply.body)]
        return replace(reply, body=b"".join(event for event in events if event is not None))


def _shaped_event(event: bytes, summaries: bool, encrypted: bool) -> bytes | None:
    name = event.split(b"\n", 1)[0]
    if not summaries and name.startswith(b"event: response.reasoning_summary"):
        return None
    if encrypted or b'"encrypted_content"' not in event:
        return event
    head, _, data = event.partition(b"data: ")
    payload = json.loads(data)
    item = payload.get("item") if isinstance(payload, dict) else None
    if isinstance(item, dict):
        item.pop("encrypted_content", None)
    return head + b"data: " + json.dumps(payload).encode() + b"\n\n"
