"""Every settings declaration — the conversation's (every answer's own) and each
capability's — in the order /settings and /status show them:
loading, storage, the commands and the catalog check read this one list."""

from __future__ import annotations

from bot.capabilities.declared import SettingsDeclaration
from bot.capabilities.images.settings import IMAGES
from bot.capabilities.listening.settings import LISTENING
from bot.capabilities.reading.settings import READING
from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.question.settings import CONVERSATION

DECLARATIONS: tuple[SettingsDeclaration, ...] = (CONVERSATION, LISTENING, WEB_SEARCH, READING, IMAGES)


def declared_keys() -> set[str]:
    """The locale keys the declarations derive (the catalog check counts them as used)."""
    return {key for d in DECLARATIONS for s in d.settings for key in s.keys()}
