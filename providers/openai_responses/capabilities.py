"""What each OpenAI model takes on the Responses API (pure; no SDK).

OpenAI's current families (gpt-5.5, gpt-5.6-*, gpt-6-*) refuse function tools next to a
reasoning effort on Chat Completions ("Function tools with reasoning_effort are not
supported for gpt-5.6-terra in /v1/chat/completions. To use function tools, use
/v1/responses or set reasoning_effort to 'none'.", and on 5.6 and 6 an absent effort is
the default reasoning, refused too); reasoning summaries exist only on Responses. So
every OpenAI model is asked on the Responses API. What the models take there (OpenAI's
reasoning, function calling, web search and file inputs guides, checked 2026-12):

- Reasoning (`reasoning.effort`, with `reasoning.summary: "auto"` so the summary
  streams): the o-series from o1 on (not o1-preview or o1-mini), the gpt-5 family and
  everything after it (gpt-5.x, gpt-6-*), and the open gpt-oss models. The "chat" models
  (gpt-5-chat-latest, gpt-5.x-chat-latest) and the gpt-4 lines do not reason. Every
  reasoning model takes low, medium and high.
- Sampling: a reasoning model refuses `temperature` ("Unsupported parameter:
  'temperature' is not supported with this model.", param `temperature`), and so do
  o1-mini and o1-preview, which reason without taking an effort; only the models that
  do not reason get one. (From gpt-5.1 on a model with reasoning effort
  "none" takes it again; the bot never turns reasoning to "none", so it never sends one
  there.)
- Web search (the `web_search` tool, citations as `url_citation` annotations): every
  model from gpt-4o on but gpt-4.1-nano and the reasoning models without tools
  (o1-preview, o1-mini) and o3-mini; unknown names are assumed to be newer and take it.
- Files: a PDF as an `input_file` for the models with vision (gpt-4o and later, o1 and
  later, but o1-mini, o1-preview and o3-mini, and the audio, realtime, transcribe, tts
  and search variants); any other or unknown OpenAI model gets the document's text.
- Tools: every model but o1-preview and o1-mini.
"""

from __future__ import annotations

import re

from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities, Reasoning, RouteHints, model_name

_REASONING = re.compile(r"^(o\d+|gpt-(?:[5-9]|\d{2,})|gpt-oss)($|[-.])")
_O_SERIES = re.compile(r"^o\d+($|[-.])")  # every o-series model reasons, with an effort or not
_NO_TOOLS = ("o1-preview", "o1-mini")
_NO_SEARCH = ("gpt-4.1-nano", "o1-preview", "o1-mini", "o3-mini", "gpt-3.5", "gpt-4-", "gpt-4o-audio",
              "gpt-4o-realtime")
_FILE_INPUT = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.[1-9]|gpt-(?:[5-9]|\d{2,})|o[1-9])($|[-.])")
_FILE_WITHOUT = ("o1-mini", "o1-preview", "o3-mini")
_NO_VISION_WORDS = ("audio", "realtime", "transcribe", "tts", "search")


def own_name(model: str) -> str:
    """The model's own name: lower case, without a vendor prefix such as `openai/`."""
    return model_name(model).rsplit("/", 1)[-1]


def reasons(model: str) -> bool:
    """Whether an OpenAI model takes a reasoning effort (its reasoning models do)."""
    name = own_name(model)
    if "chat" in name or name.startswith(_NO_TOOLS):
        return False
    return _REASONING.match(name) is not None


def takes_files(model: str) -> bool:
    """Whether an OpenAI model reads a PDF itself (see the module docstring)."""
    name = own_name(model)
    if name.startswith(_FILE_WITHOUT) or any(word in name for word in _NO_VISION_WORDS):
        return False
    return _FILE_INPUT.match(name) is not None


def capabilities(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    """OpenAI's answer for `model` on the Responses API (see the module docstring)."""
    name = own_name(model)
    thinking = reasons(name)
    return ModelCapabilities(
        provider=provider, model=model, api="responses",
        web_search=None if name.startswith(_NO_SEARCH) or name == "gpt-4" else "responses_tool",
        documents="file" if takes_files(name) else "text",
        reasoning=Reasoning("effort", summarized=True) if thinking else None,
        sampling=frozenset() if thinking or _O_SERIES.match(name) else frozenset({"temperature"}),
        tools=not name.startswith(_NO_TOOLS),
    )
