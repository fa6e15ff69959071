"""The server's generation settings put on an answer's request.

Each provider family's request builder turns them into its own form (OpenAI-format
`reasoning_effort`, Anthropic's `thinking` budget, Gemini's `thinkingConfig`); here they
only land on the `ChatRequest`. A setting the server did not choose leaves the request
as it was (the operator's MAX_OUTPUT_TOKENS, the provider's own temperature).
"""

from __future__ import annotations

import dataclasses

from bot.repo.params import Params
from providers.model_capabilities import ModelCapabilities
from providers.types import ChatRequest

# The settings a model may not take, by the name `/model params` gives them.
TEMPERATURE = "temperature"
REASONING = "reasoning"


def apply_params(request: ChatRequest, params: Params) -> ChatRequest:
    """`request` with the server's settings; reasoning "off" asks for none."""
    changes: dict = {}
    if params.temperature is not None:
        changes["temperature"] = params.temperature
    if params.max_output_tokens is not None:
        changes["max_output_tokens"] = params.max_output_tokens
    if params.reasoning == "off":
        changes.update(reasoning_effort=None, thinking_budget=None)
    elif params.reasoning is not None:
        changes["reasoning_effort"] = params.reasoning
    return dataclasses.replace(request, **changes) if changes else request


def unsent_settings(params: Params, capabilities: ModelCapabilities) -> tuple[str, ...]:
    """The server's settings that never reach this model because it takes none of them
    (each family's request builder leaves them out): said in `/model params` and
    `/status`, never a silent drop."""
    unsent: list[str] = []
    if params.temperature is not None and not capabilities.takes_temperature:
        unsent.append(TEMPERATURE)
    if params.reasoning not in (None, "off") and capabilities.reasoning is None:
        unsent.append(REASONING)
    return tuple(unsent)
