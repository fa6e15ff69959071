"""Which listed names match what a member typed, and whether a name is listed (pure).

Matching ignores case; names that start with the typed text come first (an exact match
before them), then names that hold it elsewhere, each group in the provider's own order
(Anthropic lists its newest models first). Discord shows at most 25 choices, each name
and value 1 to 100 characters: a longer name cannot be offered (it can still be typed).
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.edge.limits import AUTOCOMPLETE_CHOICES_LIMIT, CHOICE_NAME_LIMIT
from providers.identity import Provider
from providers.model_list import ListedModel

GEMINI_RESOURCE = "models/"  # Gemini's resource form of a name, which its API takes too


def best_matches(models: Iterable[ListedModel], typed: str, limit: int = AUTOCOMPLETE_CHOICES_LIMIT) -> list[str]:
    """At most `limit` model ids matching `typed`, best first (see the module docstring)."""
    needle = typed.strip().lower()
    exact: list[str] = []
    prefix: list[str] = []
    inner: list[str] = []
    for model in models:
        name = model.id
        if len(name) > CHOICE_NAME_LIMIT:
            continue
        low = name.lower()
        if low == needle:
            exact.append(name)
        elif low.startswith(needle):
            prefix.append(name)
        elif needle in low:
            inner.append(name)
    return (exact + prefix + inner)[:limit]


def is_listed(models: Iterable[ListedModel], provider: Provider, model: str) -> bool:
    """Whether `model` (as a member typed it) names a listed model: the same id, or for
    Gemini the same model in its resource form (`models/…`)."""
    name = model.strip()
    if provider is Provider.GOOGLE and name.startswith(GEMINI_RESOURCE):
        name = name[len(GEMINI_RESOURCE):]
    return any(listed.id == name for listed in models)
