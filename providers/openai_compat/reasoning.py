"""How each provider of the OpenAI wire family is asked to reason, and for which models.

A reasoning switch sent to a model that does not take it is not harmless: OpenAI answers
400 `unsupported_parameter` for `reasoning_effort` on gpt-4o or gpt-5-chat-latest, which
would turn `/model params reasoning high` into a failed answer. So each switch goes only
where the provider documents it; an unknown model gets none (it still answers, without
the requested reasoning).

What the providers document (checked 2026-12-02):

- OpenAI: `reasoning_effort` is for reasoning models only: o1 (not o1-preview or
  o1-mini, which never took it), o3, o3-mini, o3-pro, o4-mini, the gpt-5 family
  (gpt-5, -mini, -nano, -pro, gpt-5.x) and the open gpt-oss models. The gpt-5 "chat"
  models (gpt-5-chat-latest, gpt-5.x-chat-latest) are not reasoning models: OpenAI
  refuses the field there or accepts one fixed value, so they get none. The reasoning
  models (o1-mini and o1-preview too) refuse a temperature other than the default, so
  they get none either.
- OpenRouter: one `reasoning` object for every model, `{"effort": ...}` or
  `{"max_tokens": ...}`; OpenRouter maps it to the model's own switch and leaves it out
  for a model that cannot reason.
- DeepSeek: `deepseek-reasoner` reasons because of its name and never took a switch
  (`deepseek-chat` is the non-thinking name). The newer models (deepseek-v4-*,
  deepseek-flash) take `thinking: {"type": "enabled"|"disabled"}` and `reasoning_effort`
  (low, high, max; medium is read as high).
- Z.ai: GLM-4.5 and later (4.5, 4.6, 4.7, 5.x, with their -air/-flash/-v variants) take
  their own `thinking: {"type": "enabled"|"disabled"}`; older GLM-4 models have no
  thinking. GLM-5.2 and later also take `reasoning_effort`, on a low/high/max scale
  without "medium"; only `thinking` is sent, which every thinking GLM takes.
- A custom endpoint is any server speaking the format (vLLM, llama.cpp, a gateway);
  whether it takes `reasoning_effort` cannot be known from here, and many such servers
  refuse unknown fields. It is sent only when the operator says the endpoint takes it
  (CUSTOM_REASONING_EFFORT, carried by `EndpointPolicy.reasoning_effort`).
"""

from __future__ import annotations

import re
from typing import Any

from providers.types import ChatRequest
from providers.web_search import is_openai_search_model

_OPENAI_REASONING = re.compile(r"^(o\d+|gpt-5|gpt-oss)($|[-.])")
_OPENAI_WITHOUT = ("o1-preview", "o1-mini")
_DEEPSEEK_BY_NAME = frozenset({"deepseek-reasoner", "deepseek-chat"})
_GLM_THINKING = re.compile(r"^glm-(4\.[5-9]|[5-9])")


def _name(model: str) -> str:
    """The model's own name: lower case, without a vendor prefix such as `openai/`."""
    return model.strip().lower().rsplit("/", 1)[-1]


def openai_takes_effort(model: str) -> bool:
    """Whether an OpenAI model takes `reasoning_effort` (its reasoning models do)."""
    name = _name(model)
    if "chat" in name or name.startswith(_OPENAI_WITHOUT):
        return False
    return _OPENAI_REASONING.match(name) is not None


def takes_temperature(provider: str, model: str) -> bool:
    """Whether a temperature may go to the model: not to OpenAI's reasoning models
    (o1-mini and o1-preview among them), which refuse any but the default with a 400,
    nor to its search models (gpt-4o-search-preview, gpt-5-search-api, ...), which refuse
    it with a 400 "Model incompatible request argument supplied: temperature" whether or
    not the request asks for a search (they always search); elsewhere the provider or
    the endpoint decides."""
    if provider != "openai":
        return True
    name = _name(model)
    if is_openai_search_model(name):
        return False
    return "chat" in name or _OPENAI_REASONING.match(name) is None


def deepseek_takes_switch(model: str) -> bool:
    """Whether a DeepSeek model takes `thinking` and `reasoning_effort` (not the two
    legacy names, whose reasoning is fixed by the name)."""
    name = _name(model)
    return name.startswith("deepseek") and name not in _DEEPSEEK_BY_NAME


def glm_takes_thinking(model: str) -> bool:
    """Whether a Z.ai GLM model takes `thinking` (GLM-4.5 and later)."""
    return _GLM_THINKING.match(_name(model)) is not None


def add_reasoning(target: tuple[str, str], request: ChatRequest, body: dict[str, Any],
                  extra: dict[str, Any], *, custom_effort: bool = False) -> None:
    """Put the request's reasoning in `body` (SDK arguments) or `extra` (extra_body) in the
    form `target` (provider, model) takes; nothing where it takes none."""
    provider, model = target
    effort, budget = request.reasoning_effort, request.thinking_budget
    if effort is None and budget is None:
        return
    if provider == "openrouter":
        extra["reasoning"] = {"max_tokens": budget} if budget is not None else {"effort": effort}
    elif provider == "zai" and glm_takes_thinking(model):
        extra["thinking"] = {"type": "enabled"}
    elif provider == "deepseek" and deepseek_takes_switch(model):
        extra["thinking"] = {"type": "enabled"}
        if effort is not None:
            body["reasoning_effort"] = effort
    elif effort is not None and (
        (provider == "openai" and openai_takes_effort(model)) or (provider == "custom" and custom_effort)
    ):
        body["reasoning_effort"] = effort
