"""What each Claude model takes, on the Messages API version the SDK sends (pure; no SDK).

The pinned anthropic SDK sends `anthropic-version: 2026-10-21`. Sent to a model that does
not take it, each of these is a 400 and the answer fails, so every request reaches each
model in the form Anthropic documents (checked 2026-12 against Anthropic's API versioning
page, its thinking guides and model pages, and the SDK's own types):

- Sampling. API version 2026-10-21 refuses `temperature`, `top_p` and `top_k` on every
  model, even at their defaults ("temperature: Extra inputs are not permitted"), and
  the SDK has no argument for them: Claude takes no sampling parameter at all, and the
  bot says so where a server set one (`/model params`, `/status`).
- Thinking. None before Claude 3.7 (Claude 2, Instant, 3 and 3.5 refuse a `thinking`
  argument). The token-budget form, `{"type": "enabled", "budget_tokens": N}`, from
  3.7 Sonnet to the 4.5 models (Sonnet 4/4.5, Opus 4/4.1/4.5, Haiku 4.5). The adaptive
  form, `{"type": "adaptive"}` with `output_config.effort`, from the 4.6 models on:
  Opus and Sonnet 4.6 still take the budget form but it is deprecated there, and Opus
  4.7, the Claude 5 models and the Mythos and Fable families refuse it.
- Thinking shown. From Opus 4.7 on (and the Mythos and Fable families) `thinking.display`
  defaults to "omitted": thinking blocks stream with empty text and only their
  signature. Every model on the adaptive form takes `display`, so the bot asks
  "summarized" there (`Reasoning.summarized`); the budget-form models show their
  summaries by default and are not sent a field an older model might refuse.
- Web search, documents and prefill: see `takes_web_search`, `takes_documents` and
  `takes_prefill`.

A name without a version number (an alias of the operator's gateway) keeps the budget
form; the Mythos and Fable families are adaptive whatever the name says.
"""

from __future__ import annotations

import re
from typing import Literal

from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities, Reasoning, RouteHints

ThinkingForm = Literal["budget", "adaptive"]
_DATE = re.compile(r"-\d{8}$")
_ADAPTIVE_FAMILIES = re.compile(r"^claude-(mythos|fable)\b")


def claude_version(model: str) -> tuple[int, int] | None:
    """(major, minor) from an id such as claude-sonnet-4-5-20250929, claude-3-7-sonnet,
    claude-2.1 or claude-opus-4-6-v1; None when the name holds no version."""
    numbers = [int(n) for n in re.findall(r"\d+", _DATE.sub("", model.strip().lower()))]
    if not numbers:
        return None
    return numbers[0], numbers[1] if len(numbers) > 1 and numbers[1] < 100 else 0


def thinking_form(model: str) -> ThinkingForm | None:
    """The form of thinking the model takes; None when it takes none."""
    if _ADAPTIVE_FAMILIES.match(model.strip().lower()):
        return "adaptive"
    version = claude_version(model)
    if version is None:
        return "budget"
    if version < (3, 7):
        return None
    return "budget" if version < (4, 6) else "adaptive"


def takes_prefill(model: str, *, thinking: bool) -> bool:
    """Whether the model continues a final assistant turn (a prefill).

    Not with thinking: "Prefilling is only available for non-extended thinking modes"
    (https://docs.claude.com/en/docs/prefill-claudes-response). Not on Claude 4.6 and
    later, where a prefill is a 400 ("Prefilling assistant messages returns a 400 error
    on Claude 4.6 models", https://platform.claude.com/docs/en/about-claude/models/migration-guide),
    nor the Mythos and Fable families; a name without a version could be any model, so
    it is not risked either. Where this says no, the request asks in a user turn instead.
    """
    if thinking or _ADAPTIVE_FAMILIES.match(model.strip().lower()):
        return False
    version = claude_version(model)
    return version is not None and version < (4, 6)


# The one Claude 3.5 release without web search: the first Sonnet 3.5 (June 2024).
_NO_SEARCH = re.compile(r"^claude-3-5-sonnet-20240620\b")


def takes_web_search(model: str) -> bool:
    """Whether the model takes the web search server tool (`web_search_20250305`).

    Anthropic's web search tool page (https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool,
    checked 2026-12-03) lists Haiku 3.5, Sonnet 3.5 v2 (claude-3-5-sonnet-20241022 /
    -latest), Sonnet 3.7 and every 4.x model (Opus 4, 4.1, 4.5, 4.6; Sonnet 4, 4.5, 4.6;
    Haiku 4.5); Vertex AI's list adds the Claude 5 and Fable models, and the Mythos family,
    newer still, is assumed to take it. So: everything from 3.5 on but the June 2024 Sonnet
    3.5 (the list's "Sonnet 3.5 (new)" is the October one). Claude 2, Instant and
    the Claude 3 models refuse the tool (a 400), so they get none: they answer without
    searching. A name without a version (a gateway's alias) gets it: the operator chose
    a route that searches natively, and a modern Claude is the likely model behind it.
    """
    name = model.strip().lower()
    if _ADAPTIVE_FAMILIES.match(name):
        return True
    if _NO_SEARCH.match(name):
        return False
    version = claude_version(model)
    return version is None or version >= (3, 5)


# PDF input came with Claude 3.5 (Sonnet 3.5, both releases, and Haiku 3.5, in the PDF
# guide's first model list); Claude 2, 2.1, Instant and the Claude 3 models (Opus, Sonnet,
# Haiku) have none.
FIRST_PDF_VERSION = (3, 5)


def takes_documents(model: str) -> bool:
    """Whether the model reads a PDF itself (a `document` block): Claude 3.5 and later (see
    FIRST_PDF_VERSION), the Mythos and Fable families whatever number their names carry.
    A name without a version (a gateway's alias) does: a modern Claude is the likely
    model behind it."""
    if _ADAPTIVE_FAMILIES.match(model.strip().lower()):
        return True
    version = claude_version(model)
    return version is None or version >= FIRST_PDF_VERSION


def _reasoning(model: str) -> Reasoning | None:
    form = thinking_form(model)
    if form is None:
        return None
    return Reasoning(form, summarized=form == "adaptive")


def capabilities(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    """Anthropic's answer for `model` (see the module docstring)."""
    prefill = takes_prefill(model, thinking=False)
    return ModelCapabilities(
        provider=provider, model=model, api="messages",
        web_search="anthropic_server_tool" if takes_web_search(model) else None,
        documents="file" if takes_documents(model) else "text",
        continuation="prefill" if prefill else "ask",
        reasoning=_reasoning(model),
        sampling=frozenset(),
        tool_history_needs_tools=True,
    )
