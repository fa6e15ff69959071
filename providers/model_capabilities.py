"""The vocabulary of what a model can do: `ModelCapabilities` and what it is made of.

The types only; `providers/capabilities.py` asks each family for its answer, and each
family's `capabilities.py` builds it. Kept apart so the families can import the types
without importing the dispatch that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from providers.identity import Provider

# The wire API a route speaks; it picks the adapter (`providers.adapter.create_adapter`).
Api = Literal["chat_completions", "responses", "messages", "generate_content"]
# How a model searches the web itself (None: it does not; the bot's own tool may serve it).
SearchForm = Literal[
    "google_search",  # Gemini 2.x and later: the googleSearch tool
    "google_search_retrieval",  # Gemini 1.x: the legacy googleSearchRetrieval tool
    "anthropic_server_tool",  # Claude: the web_search server tool
    "responses_tool",  # OpenAI Responses: the web_search tool
    "openrouter_server_tool",  # OpenRouter: the openrouter:web_search server tool
    "openrouter_plugin",  # OpenRouter: the web plugin, for a model that takes no tools
]
# A PDF as the family's own file form, or as its extracted text.
DocumentForm = Literal["file", "text"]
# A cut answer continued by a prefill (the model continues a final assistant turn; a
# request that thinks never prefills) or by a user turn asking to go on.
ContinuationForm = Literal["prefill", "ask"]
# How reasoning is asked for: an effort word, a token budget, adaptive thinking with an
# effort, a thinking level, an on/off switch, or OpenRouter's reasoning object.
ReasoningForm = Literal["effort", "budget", "adaptive", "level", "switch", "openrouter"]

# The sampling parameters the bot may send (a server's `/model params temperature`).
TEMPERATURE = "temperature"


@dataclass(frozen=True, slots=True)
class Reasoning:
    """How a model reasons: the form of the switch, the effort words it takes, and whether
    the request asks for its reasoning to be shown (`summarized`: OpenAI's reasoning
    summary, Claude's `display: "summarized"`, Gemini's thought summaries). A model whose
    reasoning streams as text anyway (DeepSeek, Z.ai) needs no such ask."""

    form: ReasoningForm
    efforts: tuple[str, ...] = ("low", "medium", "high")
    summarized: bool = False


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """Everything the bot decides from a provider and a model (see the module docstring)."""

    provider: Provider
    model: str
    api: Api
    web_search: SearchForm | None = None
    # The search rides next to the function tools; else a request that searches carries
    # the search alone (Gemini 1.x and 2.x refuse both together).
    search_with_functions: bool = True
    documents: DocumentForm = "text"
    images: bool = True
    # The audio media types the model hears inline (a voice message is sent as audio only
    # when its type is here; else its transcript is sent).
    audio: frozenset[str] = frozenset()
    continuation: ContinuationForm = "ask"
    reasoning: Reasoning | None = None
    sampling: frozenset[str] = frozenset({TEMPERATURE})
    tools: bool = True
    # Assistant tool-call turns must carry the reasoning that led to them, even empty
    # (DeepSeek and Z.ai thinking modes refuse such a turn without `reasoning_content`).
    replays_reasoning: bool = False
    # A request whose history holds tool calls and results must still declare the tools
    # (Claude refuses tool_use/tool_result blocks in a request without them).
    tool_history_needs_tools: bool = False

    @property
    def takes_temperature(self) -> bool:
        return TEMPERATURE in self.sampling

    @property
    def searches_natively(self) -> bool:
        return self.web_search is not None


@dataclass(frozen=True, slots=True)
class RouteHints:
    """What the bot knows of a route beyond its provider and model name.

    `custom_api` and `custom_reasoning_effort` are the operator's word about custom
    endpoints (CUSTOM_API, CUSTOM_REASONING_EFFORT): what a server of one's own takes
    cannot be known from its name. `listed_parameters` is what the provider's model list
    said the model takes (OpenRouter's `supported_parameters`), None when not known.
    """

    custom_api: Api = "chat_completions"
    custom_reasoning_effort: bool = False
    listed_parameters: frozenset[str] | None = None


NO_HINTS = RouteHints()


def model_name(model: str) -> str:
    """A model id as the capability rules read it: trimmed, lower case, without a leading
    `models/` (Gemini's resource form)."""
    name = model.strip().lower()
    return name[len("models/"):] if name.startswith("models/") else name
