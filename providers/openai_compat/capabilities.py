"""What the chat-completions providers take: OpenRouter, DeepSeek, Z.ai and custom endpoints
(pure; no SDK). OpenAI itself speaks the Responses API (`providers/openai_responses/`).

What each provider documents (checked 2026-12):

- OpenRouter: one `reasoning` object for every model (`{"effort": …}` or
  `{"max_tokens": …}`), mapped to the model's own switch and left out for a model that
  cannot reason; `max_completion_tokens` for the output cap (`max_tokens` is deprecated);
  a PDF as a `file` part for every model (read natively or parsed by OpenRouter). Web
  search is the `openrouter:web_search` server tool for a model that takes tools; the
  older `web` plugin (deprecated, like the `:online` suffix) only where the model takes
  none. Its model list's `supported_parameters` (`RouteHints.listed_parameters`) says
  what one model takes: `tools`, `reasoning`, `temperature`; unknown, all are assumed.
- DeepSeek: `deepseek-reasoner` reasons because of its name and never took a switch;
  `deepseek-chat` is the non-thinking name. The newer models (deepseek-v4-*,
  deepseek-flash) take `thinking: {"type": "enabled"}` and `reasoning_effort` (low,
  high, max; medium is read as high). In thinking mode an assistant turn that called
  tools must carry its `reasoning_content`, even empty, or the request is refused.
- Z.ai: GLM-4.5 and later (4.5, 4.6, 4.7, 5.x, with their -air/-flash/-v variants) take
  `thinking: {"type": "enabled"}` and stream `reasoning_content`, which an assistant
  tool-call turn carries back, even empty. Older GLM-4 models have no thinking.
- A custom endpoint is any server speaking the format (vLLM, llama.cpp, a gateway);
  whether it takes `reasoning_effort` cannot be known from here, and many such servers
  refuse unknown fields: it is sent only when the operator says so
  (CUSTOM_REASONING_EFFORT), and the operator may switch such endpoints to the Responses
  API (CUSTOM_API=responses) for a server that serves it. A PDF goes as its text.
"""

from __future__ import annotations

import re

from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities, Reasoning, RouteHints, model_name

_DEEPSEEK_BY_NAME = frozenset({"deepseek-reasoner", "deepseek-chat"})
_GLM_THINKING = re.compile(r"^glm-(4\.[5-9]|[5-9])")
DEEPSEEK_EFFORTS = ("low", "medium", "high")
_NO_SAMPLING: frozenset[str] = frozenset()


def own_name(model: str) -> str:
    """The model's own name: lower case, without a vendor prefix such as `openai/`."""
    return model_name(model).rsplit("/", 1)[-1]


def deepseek_takes_switch(model: str) -> bool:
    """Whether a DeepSeek model takes `thinking` and `reasoning_effort` (not the two
    legacy names, whose reasoning is fixed by the name)."""
    name = own_name(model)
    return name.startswith("deepseek") and name not in _DEEPSEEK_BY_NAME


def glm_takes_thinking(model: str) -> bool:
    """Whether a Z.ai GLM model takes `thinking` (GLM-4.5 and later)."""
    return _GLM_THINKING.match(own_name(model)) is not None


def replays_streamed_reasoning(capabilities: ModelCapabilities) -> bool:
    """Whether a call carries back the `reasoning_content` its stream carried, even where the
    model's name did not say it thinks: a model that streams the field is in a thinking
    mode (a DeepSeek or GLM this table does not know yet, a Kimi or DeepSeek behind a custom
    gateway), and those refuse a tool turn without it. Not on OpenRouter, which keeps a
    model's reasoning through its own `reasoning_details`."""
    return capabilities.provider is not Provider.OPENROUTER


def replays_reasoning_details(capabilities: ModelCapabilities) -> bool:
    """Whether a call carries back OpenRouter's `reasoning_details` (its way to keep a
    model's reasoning, encrypted items included, across a tool round); no other provider
    of the family documents the field."""
    return capabilities.provider is Provider.OPENROUTER


def _openrouter(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    listed = hints.listed_parameters
    tools = listed is None or "tools" in listed
    reasons = listed is None or bool({"reasoning", "include_reasoning"} & listed)
    sampling = frozenset({"temperature"}) if listed is None or "temperature" in listed else _NO_SAMPLING
    return ModelCapabilities(
        provider=provider, model=model, api="chat_completions",
        web_search="openrouter_server_tool" if tools else "openrouter_plugin",
        documents="file", reasoning=Reasoning("openrouter") if reasons else None,
        sampling=sampling, tools=tools,
    )


def _deepseek(provider: Provider, model: str) -> ModelCapabilities:
    switch = deepseek_takes_switch(model)
    thinks = switch or own_name(model) == "deepseek-reasoner"
    return ModelCapabilities(
        provider=provider, model=model, api="chat_completions",
        reasoning=Reasoning("switch", DEEPSEEK_EFFORTS) if switch else None,
        replays_reasoning=thinks,
    )


def _zai(provider: Provider, model: str) -> ModelCapabilities:
    thinks = glm_takes_thinking(model)
    return ModelCapabilities(
        provider=provider, model=model, api="chat_completions",
        reasoning=Reasoning("switch", efforts=()) if thinks else None, replays_reasoning=thinks,
    )


def _custom(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    return ModelCapabilities(
        provider=provider, model=model, api=hints.custom_api,
        reasoning=Reasoning("effort", summarized=hints.custom_api == "responses")
        if hints.custom_reasoning_effort else None,
    )


def capabilities(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    """The answer for `model` on one of this family's providers (see the module docstring)."""
    if provider is Provider.OPENROUTER:
        return _openrouter(provider, model, hints)
    if provider is Provider.DEEPSEEK:
        return _deepseek(provider, model)
    if provider is Provider.ZAI:
        return _zai(provider, model)
    if provider is Provider.CUSTOM:
        return _custom(provider, model, hints)
    raise ValueError(f"{provider} is not a chat-completions provider")
