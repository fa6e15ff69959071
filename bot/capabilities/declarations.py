"""Every capability's settings declaration, in the order /settings and /status show them:
loading, storage, the commands and the catalog check read this one list."""

from __future__ import annotations

from bot.capabilities.declared import SettingsDeclaration
from bot.capabilities.reading.settings import READING
from bot.capabilities.web_search.settings import WEB_SEARCH

DECLARATIONS: tuple[SettingsDeclaration, ...] = (WEB_SEARCH, READING)


def declaration(capability: str) -> SettingsDeclaration:
    return next(d for d in DECLARATIONS if d.capability == capability)


def declared_keys() -> set[str]:
    """The locale keys the declarations derive (the catalog check counts them as used)."""
    return {key for d in DECLARATIONS for s in d.settings for key in s.keys()}
