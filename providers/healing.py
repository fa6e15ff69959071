"""Healing a request a provider refused for one parameter: send it again without it.

Providers change what their models take faster than any table here: a model stops
taking `temperature`, a field the bot sends is renamed, a value is retired. When a 400
names the parameter or value it refused, the same attempt is sent again, at once, on the
same key, without it (or with the value the provider named), and the key's health is
not touched: nothing was wrong with it. At most `MAX_HEALS` heals per request, each
changing the request, so a heal never loops.

The refusals are remembered per provider, address and model for the process's life
(`RefusalMemory`): later requests leave the parameter out up front, a manager sees it in
`/status` ("temperature dropped: the provider refused it"), and the log says it once.

What counts as a refusal naming a parameter (`refusal_of`, pure), from each provider's
documented error bodies:

- OpenAI and the chat-completions family: `param` with code `unsupported_parameter` or
  `unsupported_value`, or with a message saying it is not supported ("Unsupported
  parameter: 'temperature' is not supported with this model.", "Function tools with
  reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use
  /v1/responses instead."); and the hint "set reasoning_effort to 'none'" (the same 400
  on gpt-5.6 and later), which sets that value instead of dropping it.
- Anthropic: "<field>: Extra inputs are not permitted" (API version 2026-10-21's answer
  to `temperature`, `top_p`, `top_k`, and to any field a model does not take).
- Gemini: INVALID_ARGUMENT with `Unknown name "<field>" at '<path>'`, or a
  `BadRequest` detail's `fieldViolations[].field`.

A refusal of the request's structure (the model, the messages, the tools, the cap on
output that Anthropic requires) is never healed: without it the request means something
else. Those stay failures, classified as before.
"""

from __future__ import annotations

import copy
import logging
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from providers.log_safe import loggable

log = logging.getLogger(__name__)

MAX_HEALS = 2  # per request
MAX_ROUTES = 1024  # routes remembered; the oldest is forgotten first
MAX_REFUSALS_PER_ROUTE = 8
# Parts of a request that are what it asks, not how: never dropped (see the module docstring).
STRUCTURAL = frozenset({
    "model", "messages", "input", "contents", "stream", "tools", "max_tokens", "system",
    "instructions", "systemInstruction", "system_instruction", "stream_options", "store", "include",
})
_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_EXTRA_INPUTS = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*): Extra inputs are not permitted")
_SET_VALUE = re.compile(r"set ([A-Za-z_][A-Za-z0-9_.]*) to '([^']{1,40})'")
_UNKNOWN_NAME = re.compile(r"Unknown name \"([A-Za-z_][A-Za-z0-9_]*)\"(?: at '([A-Za-z0-9_.]+)')?")
_UNSUPPORTED = ("unsupported_parameter", "unsupported_value")


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused parameter: its dotted path in the request body, and the value to send
    instead (None: leave it out)."""

    path: str
    value: str | None = None

    def describe(self) -> str:
        """A short plain phrase for logs: `temperature dropped`, `reasoning_effort set to none`."""
        return f"{self.path} dropped" if self.value is None else f"{self.path} set to {self.value}"


def _healable(path: str | None) -> str | None:
    if not path or not _PATH.match(path):
        return None
    return None if path.split(".", 1)[0] in STRUCTURAL else path


def _camel(path: str) -> str:
    """`generation_config.thinking_config` → `generationConfig.thinkingConfig` (Gemini's
    errors name the proto's fields; the bot's body uses the REST form)."""
    return ".".join(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), part) for part in path.split("."))


def _inner(body: Any) -> Mapping[str, Any]:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return body["error"]
    return body if isinstance(body, Mapping) else {}


def _openai_style(error: Mapping[str, Any]) -> Refusal | None:
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    hinted = _SET_VALUE.search(message)
    if hinted is not None and _healable(hinted.group(1)):
        return Refusal(hinted.group(1), hinted.group(2))
    param = error.get("param") if isinstance(error.get("param"), str) else None
    code = error.get("code")
    wording = message.lower()
    unsupported = (code in _UNSUPPORTED or wording.startswith(("unsupported parameter", "unsupported value"))
                   or "not supported" in wording)
    path = _healable(param) if unsupported else None
    return Refusal(path) if path else None


def _anthropic_style(error: Mapping[str, Any]) -> Refusal | None:
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    found = _EXTRA_INPUTS.search(message)
    path = _healable(found.group(1)) if found else None
    return Refusal(path) if path else None


def _gemini_style(error: Mapping[str, Any]) -> Refusal | None:
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    found = _UNKNOWN_NAME.search(message)
    if found is not None:
        where = f"{found.group(2)}.{found.group(1)}" if found.group(2) else found.group(1)
        path = _healable(_camel(where))
        return Refusal(path) if path else None
    for detail in error.get("details") or ():
        for violation in (detail.get("fieldViolations") or ()) if isinstance(detail, Mapping) else ():
            field = violation.get("field") if isinstance(violation, Mapping) else None
            path = _healable(_camel(field)) if isinstance(field, str) else None
            if path:
                return Refusal(path)
    return None


def refusal_of(status: int | None, body: Any) -> Refusal | None:
    """The parameter a 400 refused, read from the provider's error body; None when the body
    names none that may be healed (pure)."""
    if status != 400:
        return None
    error = _inner(body)
    return _openai_style(error) or _anthropic_style(error) or _gemini_style(error)


def _container(body: dict[str, Any], path: str) -> tuple[dict[str, Any], str] | None:
    """The dict holding the path's last key, looked up in the body and, for the arguments
    an SDK call takes, in its `extra_body` (where untyped fields travel)."""
    *parents, last = path.split(".")
    for root in (body, body.get("extra_body")):
        node: Any = root
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node:
            return node, last
    return None


def heal(body: dict[str, Any], refusal: Refusal) -> dict[str, Any] | None:
    """A copy of `body` without the refused parameter (or with its named value); None when
    the body has no such parameter or already says it, so nothing would change."""
    healed = copy.deepcopy(body)
    found = _container(healed, refusal.path)
    if found is None:
        return None
    node, key = found
    if refusal.value is None:
        del node[key]
    elif node[key] == refusal.value:
        return None
    else:
        node[key] = refusal.value
    return healed


Route = tuple[str, str | None, str]
"""(provider, the configured base URL or None for the provider's own, model)."""


class RefusalMemory:
    """The parameters each route refused, for the process's life (bounded)."""

    def __init__(self) -> None:
        self._routes: OrderedDict[Route, dict[str, Refusal]] = OrderedDict()

    def remember(self, route: Route, refusal: Refusal) -> None:
        """Keep `refusal` for `route`; the first time, one log line says what changed."""
        known = self._routes.get(route)
        if known is None:
            known = self._routes[route] = {}
            while len(self._routes) > MAX_ROUTES:
                self._routes.popitem(last=False)
        self._routes.move_to_end(route)
        if refusal.path in known or len(known) >= MAX_REFUSALS_PER_ROUTE:
            return
        known[refusal.path] = refusal
        provider, base_url, model = route
        log.warning("%s refused a parameter for %s%s: %s for it from now on", loggable(provider),
                    loggable(model), f" at {loggable(base_url)}" if base_url else "", refusal.describe())

    def refusals(self, route: Route) -> list[Refusal]:
        """What `route` refused so far, in the order it was learned."""
        return list(self._routes.get(route, {}).values())

    def applied(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        """`body` with every refusal the route is known for applied up front."""
        for refusal in self._routes.get(route, {}).values():
            body = heal(body, refusal) or body
        return body
