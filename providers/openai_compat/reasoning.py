"""How a chat-completions model is asked to reason, in the form its capabilities name.

A reasoning switch sent to a model that does not take it is not harmless: many servers
answer 400 for a field they do not know, which would turn `/model params reasoning
high` into a failed answer. So each switch goes only where the model's capabilities
(`providers/openai_compat/capabilities.py`) say it takes one; elsewhere the model answers
without the requested reasoning.

- OpenRouter (`openrouter`): one `reasoning` object for every model, `{"effort": …}` or
  `{"max_tokens": …}`; OpenRouter maps it to the model's own switch.
- DeepSeek and Z.ai (`switch`): `thinking: {"type": "enabled"}`; DeepSeek's newer models
  also take `reasoning_effort` (their effort words), Z.ai's GLM models only the switch.
- A custom endpoint (`effort`, only when the operator says it takes one): `reasoning_effort`.
"""

from __future__ import annotations

from typing import Any

from providers.model_capabilities import ModelCapabilities
from providers.types import ChatRequest


def add_reasoning(capabilities: ModelCapabilities, request: ChatRequest, body: dict[str, Any],
                  extra: dict[str, Any]) -> None:
    """Put the request's reasoning in `body` (SDK arguments) or `extra` (extra_body) in the
    form the model takes; nothing where it takes none."""
    reasoning = capabilities.reasoning
    effort, budget = request.reasoning_effort, request.thinking_budget
    if reasoning is None or (effort is None and budget is None):
        return
    if reasoning.form == "openrouter":
        extra["reasoning"] = {"max_tokens": budget} if budget is not None else {"effort": effort}
    elif reasoning.form == "switch":
        extra["thinking"] = {"type": "enabled"}
        if effort is not None and effort in reasoning.efforts:
            body["reasoning_effort"] = effort
    elif effort is not None:
        body["reasoning_effort"] = effort
