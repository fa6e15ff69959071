"""Members' time zones: IANA names as `zoneinfo` knows them, and how a due time reads.

A name is checked against `zoneinfo.available_timezones()` (read once), so a member's
typo is refused instead of stored; the autocomplete offers at most Discord's 25 choices.
A due time is shown in the member's zone and language with Babel, with the zone's name
so nobody has to guess which clock it is on.
"""

from __future__ import annotations

import functools
import zoneinfo
from datetime import datetime
from zoneinfo import ZoneInfo

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_time

from providers.i18n import normalize_locale

DEFAULT_ZONE = "UTC"
MAX_CHOICES = 25  # Discord's bound on an autocomplete's choices


@functools.cache
def known_zones() -> tuple[str, ...]:
    """Every IANA zone this machine knows, sorted (the tzdata files, read once)."""
    return tuple(sorted(zoneinfo.available_timezones()))


def zone_named(name: str) -> ZoneInfo | None:
    """The zone `name` names exactly (case-insensitively), or None."""
    wanted = name.strip().lower()
    found = next((zone for zone in known_zones() if zone.lower() == wanted), None)
    return ZoneInfo(found) if found is not None else None


def zone_or_default(name: str | None) -> ZoneInfo:
    """A stored name as a zone; a name this machine no longer knows reads as UTC."""
    return (zone_named(name) if name else None) or ZoneInfo(DEFAULT_ZONE)


def zone_choices(typed: str) -> list[str]:
    """Up to 25 zones for what the member typed: names starting with it first, then
    names containing it ("tokyo" finds Asia/Tokyo)."""
    needle = typed.strip().lower().replace(" ", "_")
    zones = known_zones()
    starting = [z for z in zones if z.lower().startswith(needle)]
    containing = [z for z in zones if needle in z.lower() and z not in starting]
    return [*starting, *containing][:MAX_CHOICES]


def babel_locale(locale: object) -> Locale:
    """Babel's locale for a Discord one ("en-US", "ja"); English when Babel has none."""
    try:
        return Locale.parse(normalize_locale(locale) or "en")
    except (ValueError, UnknownLocaleError):
        return Locale("en")


def shown_due(due: datetime, zone: ZoneInfo, locale: object) -> str:
    """"Dec 24, 2026 9:00 AM (Asia/Tokyo)": the due time on the member's clock."""
    local, language = due.astimezone(zone), babel_locale(locale)
    return f"{format_date(local, 'medium', locale=language)} {format_time(local, 'short', locale=language)} ({zone.key})"
