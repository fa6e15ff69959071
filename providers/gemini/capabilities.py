"""What each model served by the Gemini API takes (pure; no SDK).

From Google's Gemini API documentation (thinking, grounding with Google Search,
document understanding) and the google-genai SDK's own types, checked 2026-12:

- Thinking. None on Gemini 1.x, the 2.0 models (but the experimental 2.0 "thinking"
  ones) and the open Gemma models served by the same API: they refuse a
  `thinkingConfig`. Gemini 2.5 takes a token budget (`thinkingBudget`). Gemini 3 and
  later take a thinking level (`thinkingLevel`): Google documents the budget as
  suboptimal there, and from Gemini 3.5 on as refused (the SDK's own note on
  `thinking_level`). Gemini 3 Pro takes the levels low and high; the Flash models
  minimal, low, medium and high. Thoughts are shown as summaries (`includeThoughts`).
- Web search (Grounding with Google Search): Gemini 1.x has the legacy
  `googleSearchRetrieval`, Gemini 2.x `googleSearch`, both only alone (a search tool
  next to function declarations is a 400 there); Gemini 3 and later take `googleSearch`
  next to function declarations. Gemma has none.
- Documents: every Gemini model reads a PDF inline; Gemma reads its text.
- Audio: the audio guide lists the inline types WAV, MP3, AIFF, AAC, OGG and FLAC
  (`audio/ogg`: a Discord voice message, Ogg Opus, goes as it is); Gemma hears none.
- A cut answer: the contents end with the model's turn and Gemini continues it.

A name without a version (an alias such as `gemini-flash-latest`) is read as the newest
generation: the alias points at one.
"""

from __future__ import annotations

import re

from providers.identity import Provider
from providers.model_capabilities import ModelCapabilities, Reasoning, RouteHints, model_name

_VERSION = re.compile(r"^gemini-(\d+)(?:\.(\d+))?")
_EXPERIMENTAL_THINKING = re.compile(r"^gemini-2\.0-.*thinking")
FIRST_LEVEL_VERSION = (3, 0)
PRO_LEVELS = ("low", "high")
FLASH_LEVELS = ("minimal", "low", "medium", "high")
LEVELS = ("low", "medium", "high")
AUDIO_TYPES = frozenset({"audio/wav", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"})


def gemini_version(model: str) -> tuple[int, int] | None:
    """(major, minor) of a `gemini-X.Y-…` id; None for Gemma or a name without one."""
    match = _VERSION.match(model_name(model))
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def _reasoning(name: str, version: tuple[int, int] | None) -> Reasoning | None:
    if name.startswith("gemma-"):
        return None
    if version is not None and version < (2, 5):
        return Reasoning("budget", summarized=True) if _EXPERIMENTAL_THINKING.match(name) else None
    if version is not None and version < FIRST_LEVEL_VERSION:
        return Reasoning("budget", summarized=True)
    if "-pro" in name:
        return Reasoning("level", PRO_LEVELS, summarized=True)
    if "-flash" in name:
        return Reasoning("level", FLASH_LEVELS, summarized=True)
    return Reasoning("level", LEVELS, summarized=True)


def capabilities(provider: Provider, model: str, hints: RouteHints) -> ModelCapabilities:
    """The Gemini API's answer for `model` (see the module docstring)."""
    name = model_name(model)
    version = gemini_version(name)
    gemma = name.startswith("gemma-")
    if gemma:
        search = None
    elif version is not None and version < (2, 0):
        search = "google_search_retrieval"
    else:
        search = "google_search"
    return ModelCapabilities(
        provider=provider, model=model, api="generate_content",
        web_search=search,
        search_with_functions=version is None or version >= FIRST_LEVEL_VERSION,
        documents="text" if gemma else "file",
        audio=frozenset() if gemma else AUDIO_TYPES,
        continuation="prefill",
        reasoning=_reasoning(name, version),
    )
