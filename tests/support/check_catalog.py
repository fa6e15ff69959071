"""Whether `bot.catalog.cache.ModelCatalog` is reading a model list now: what tests wait on
or assert (single flight); the bot never asks, a keystroke only starts at most one read."""

from __future__ import annotations

from bot.catalog.cache import ListKey, ModelCatalog


def fetching(catalog: ModelCatalog, key: ListKey) -> bool:
    """Whether a read of `key`'s list is running now (the catalog's in-flight tasks)."""
    return key in catalog._fetching
