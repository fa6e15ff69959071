"""Slash-command localization through the Babel catalogs.

A command string is `locale_str(<English text>, key=<catalog key>)`: Discord shows the
English message as the base name/description and the translator supplies the other
locales. The lookup is strict (no English fallback), so a locale without its own entry
gets no "localization" and Discord falls back to the base string.
"""

from __future__ import annotations

from discord import Locale, app_commands

from bot.edge.command_names import for_discord
from providers.i18n import strict_translation, t


def lstr(key: str) -> app_commands.locale_str:
    """A localizable command string: English text as the message, the key in extras."""
    return app_commands.locale_str(t(key, "en"), key=key)


class BabelTranslator(app_commands.Translator):
    """Serves `commands.*` catalog entries to discord.py when the command tree syncs; a
    description naming a command names it by the locale's own path (no mention shows there)."""

    async def translate(
        self, string: app_commands.locale_str, locale: Locale, context: app_commands.TranslationContext,
    ) -> str | None:
        key = string.extras.get("key")
        if key is None:
            return None
        found = strict_translation(key, locale)
        if found is None or context.location is not app_commands.TranslationContextLocation.command_description:
            return found
        return for_discord(found, locale, mentions=False)
