"""Every slash command a localized tip names exists, spelled as Discord shows it.

Command paths come from the `commands.*.name` entries of the English commands catalog
(the names the bot syncs); tips come from every catalog of every language.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

LOCALES = Path(__file__).resolve().parents[2] / "locales"
MENTION = re.compile(r"`/([a-z][a-z0-9_-]*(?: [a-z][a-z0-9_-]*\b(?![:-]))*)")  # option names (x:) excluded


def _catalog(lang: str, domain: str) -> dict[str, str]:
    with open(LOCALES / lang / "LC_MESSAGES" / f"{domain}.po", "rb") as handle:
        return {m.id: m.string for m in read_po(handle) if m.id}


def command_paths() -> set[tuple[str, ...]]:
    names = _catalog("en", "commands")
    paths = set()
    for key in names:
        parts = key.split(".")
        if parts[0] != "commands" or parts[-1] != "name" or len(parts) < 3 or parts[1] == "option":
            continue
        segments = parts[1:-1]
        prefixes = [".".join(["commands", *segments[: i + 1], "name"]) for i in range(len(segments))]
        if all(prefix in names for prefix in prefixes):
            paths.add(tuple(names[prefix] for prefix in prefixes))
    return paths


def tip_mentions() -> list[tuple[str, str, str]]:
    found = []
    for po in sorted(LOCALES.glob("*/LC_MESSAGES/*.po")):
        lang, domain = po.parts[-3], po.stem
        for key, text in _catalog(lang, domain).items():
            found.extend((f"{lang}/{domain}:{key}", key, m.group(1)) for m in MENTION.finditer(text))
    return found


def test_catalogs_name_commands_at_all():
    assert tip_mentions(), "no tip names a command: the scan would prove nothing"
    assert ("keys", "add") in command_paths()


@pytest.mark.parametrize(("where", "key", "mention"), tip_mentions(), ids=lambda v: str(v)[:60])
def test_named_command_exists(where, key, mention):
    assert tuple(mention.split()) in command_paths(), f"{where} names /{mention}, which the bot does not have"
