"""Slash-command localization through the Babel catalogs.

A command string is `locale_str(<English text>, key=<catalog key>)`: Discord shows the
English message as the base name/description and the translator supplies the other
locales. The lookup is strict (no English fallback), so a locale without its own entry
gets no "localization" and Discord falls back to the base string.

The keys follow one convention, so a command is declared by its key prefix alone
(`localized`, a group by `named`): `<prefix>.name` and `<prefix>.description` for a
command or group, and `commands.param.<parameter>.name` / `.description` for each of its
parameters (tests/errors/test_catalog_keys.py reads the same convention).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from discord import Locale, app_commands
from discord.utils import is_inside_class

from bot.edge.command_names import for_discord
from providers.i18n import strict_translation, t


def lstr(key: str) -> app_commands.locale_str:
    """A localizable command string: English text as the message, the key in extras."""
    return app_commands.locale_str(t(key, "en"), key=key)


def named(prefix: str) -> dict[str, app_commands.locale_str]:
    """The name and description of the command or group whose keys start with `prefix`."""
    return {"name": lstr(f"{prefix}.name"), "description": lstr(f"{prefix}.description")}


Callback = TypeVar("Callback", bound=Callable[..., Any])


def localized(make: Callable[..., Callable[[Callback], Any]], prefix: str, *,
              params: Mapping[str, str] | None = None, **options: Any) -> Callable[[Callback], Any]:
    """`make` (a group's `.command` or `app_commands.command`) named and described from
    `prefix`, each parameter of the callback renamed and described from
    `commands.param.<its name>` (or `commands.param.<params[its name]>` where its key
    differs); `options` go to `make` as they are. Goes above `choices`, `guild_only` and the
    like, as `make` itself would."""
    def decorate(callback: Callback) -> Any:
        names = _option_names(callback)
        if unknown := set(params or {}) - set(names):
            raise TypeError(f"{callback.__qualname__} has no parameter {sorted(unknown)}")
        keys = {name: (params or {}).get(name, name) for name in names}
        if keys:
            callback = app_commands.rename(**{name: lstr(f"commands.param.{key}.name")
                                              for name, key in keys.items()})(callback)
            callback = app_commands.describe(**{name: lstr(f"commands.param.{key}.description")
                                                for name, key in keys.items()})(callback)
        return make(**named(prefix), **options)(callback)
    return decorate


def _option_names(callback: Callable[..., Any]) -> list[str]:
    """The parameters discord.py makes options of: all but `self` (in a cog) and the interaction."""
    skipped = 2 if is_inside_class(callback) else 1
    return list(inspect.signature(callback).parameters)[skipped:]


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
