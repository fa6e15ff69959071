"""Localized strings by dotted key, from the Babel catalogs under `locales/`.

Msgids are keys (`genai.tips.model_fallback`), so English text lives in the `en`
catalog and every other locale falls back to it key by key. The key prefix picks the
catalog domain, so each area of the bot owns its own `.po` file. Compiled `.mo` files
are build output; when one is missing or older than its `.po` (a fresh dev checkout,
an edited catalog) the `.po` is parsed instead, so a checkout works without a build.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locales"
FALLBACK_LOCALE = "en"

# Key prefix -> catalog domain (file name without extension).
DOMAINS: dict[str, str] = {"genai": "errors", "commands": "commands", "chat": "chat"}


def domain_for(key: str) -> str:
    """The catalog domain that holds `key`, chosen by its first dotted segment."""
    prefix = key.split(".", 1)[0]
    try:
        return DOMAINS[prefix]
    except KeyError:
        raise ValueError(
            f"no catalog domain for key {key!r}; known prefixes: {', '.join(sorted(DOMAINS))}"
        ) from None


def normalize_locale(locale: Any) -> str | None:
    """Discord style (`en-US`, `pt-BR`, a `discord.Locale`) to gettext style (`en_US`)."""
    if locale is None:
        return None
    text = str(getattr(locale, "value", locale)).strip().replace("-", "_")
    return text or None


def locale_candidates(locale: Any) -> list[str]:
    """The locale's own lookup chain without English: `pt_BR` -> [`pt_BR`, `pt`]."""
    name = normalize_locale(locale)
    if name is None:
        return []
    chain = [name]
    language = name.split("_", 1)[0]
    if language != name:
        chain.append(language)
    return chain


def _safe_format(text: str, params: dict[str, Any]) -> str:
    """str.format, but a catalog typo must never turn an error embed into a crash."""
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError, AttributeError):
        return text


class Catalogs:
    """Loaded translations for one locale directory, cached per (domain, locale)."""

    def __init__(self, locale_dir: Path | str = LOCALE_DIR) -> None:
        self.locale_dir = Path(locale_dir)
        self._cache: dict[tuple[str, str], Translations | None] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget loaded catalogs (after a catalog file changed)."""
        with self._lock:
            self._cache.clear()

    def translations(self, domain: str, locale: str) -> Translations | None:
        """The catalog of `domain` for exactly `locale` (gettext form), or None if absent."""
        cache_key = (domain, locale)
        with self._lock:
            if cache_key in self._cache:
                return self._cache[cache_key]
        loaded = self._load(domain, locale)
        with self._lock:
            self._cache[cache_key] = loaded
        return loaded

    def _load(self, domain: str, locale: str) -> Translations | None:
        base = self.locale_dir / locale / "LC_MESSAGES"
        po_path, mo_path = base / f"{domain}.po", base / f"{domain}.mo"
        if mo_path.is_file() and (
            not po_path.is_file() or mo_path.stat().st_mtime >= po_path.stat().st_mtime
        ):
            with mo_path.open("rb") as fp:
                return Translations(fp, domain=domain)
        if po_path.is_file():
            with po_path.open("rb") as fp:
                catalog = read_po(fp, locale=None, domain=domain)
            buffer = io.BytesIO()
            write_mo(buffer, catalog)
            buffer.seek(0)
            return Translations(buffer, domain=domain)
        return None

    def lookup(self, key: str, chain: Iterable[str]) -> str | None:
        """The first own translation of `key` along `chain`, or None."""
        domain = domain_for(key)
        for locale in chain:
            translations = self.translations(domain, locale)
            if translations is None:
                continue
            text = translations.gettext(key)
            if text and text != key:
                return text
        return None

    def t(self, key: str, locale: Any = None, **params: Any) -> str:
        """Text for `key` in `locale`, falling back to English, then to the key itself."""
        chain = locale_candidates(locale)
        if FALLBACK_LOCALE not in chain:
            chain.append(FALLBACK_LOCALE)
        text = self.lookup(key, chain)
        return key if text is None else _safe_format(text, params)

    def strict_translation(self, key: str, locale: Any) -> str | None:
        """The locale's own text for `key` (no English fallback), or None."""
        return self.lookup(key, locale_candidates(locale))


DEFAULT_CATALOGS = Catalogs()


def t(key: str, locale: Any = None, **params: Any) -> str:
    """Localized text for a dotted key; English for uncatalogued locales and missing entries."""
    return DEFAULT_CATALOGS.t(key, locale, **params)


def strict_translation(key: str, locale: Any) -> str | None:
    """For discord.py's Translator: None makes Discord show the English base string."""
    return DEFAULT_CATALOGS.strict_translation(key, locale)
