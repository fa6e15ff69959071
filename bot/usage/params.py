"""The server's generation settings put on an answer's request.

Each provider family's request builder turns them into its own form (OpenAI-format
`reasoning_effort`, Anthropic's `thinking` budget, Gemini's `thinkingConfig`); here they
only land on the `ChatRequest`. A setting the server did not choose leaves the request
as it was (the operator's MAX_OUTPUT_TOKENS, the provider's own temperature).
"""

from __future__ import annotations

import dataclasses

from bot.repo.params import Params
from providers.types import ChatRequest


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
