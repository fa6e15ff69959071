"""Command paths in catalog text, as each Discord reader sees them.

Catalog text (every language) names a command by its English path, in backticks or bare:
`/model set`, /keys add. Written so, a Japanese hint would send a Japanese member to a
command their client does not show under that name. On Discord `for_discord` turns each
path into a command mention, `</model set:id>`, once this process knows the command's id
(the client shows it in the reader's own language, and it is clickable), else into the
reader's localized path (`/モデル 設定`). It is applied where catalog text goes to Discord
(command replies, chat notices, error embeds, a check's reply); a process that never synced
(the terminal's `bot ask` and `bot check`) has nothing installed, and its text keeps the
paths as written.

The names are the ones the bot syncs (each command's translated payload, through the
tree's translator), so a command added later is named without editing anything here. They
are installed once per process, after the tree is synced (`install`), and forgotten when
the bot closes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import discord
from discord import app_commands

from providers.i18n import locale_candidates

log = logging.getLogger(__name__)

SUBCOMMAND, SUBCOMMAND_GROUP = 1, 2
# A path as catalog text writes it: a slash at a word's start (not a URL's, not inside a
# mention), lowercase words; the backticks around it, when there are.
WRITTEN_PATH = re.compile(r"(?<![\w/<:.])(`?)/([a-z][a-z0-9_-]*(?: [a-z][a-z0-9_-]*)*)(`?)")


@dataclass(frozen=True)
class NamedCommand:
    """One runnable command: its English path, its localized paths and descriptions (by
    Discord locale, e.g. "ja"), and its root's id when Discord gave one."""

    path: tuple[str, ...]
    description: str
    names: Mapping[str, str] = field(default_factory=dict)
    descriptions: Mapping[str, str] = field(default_factory=dict)
    root_id: int | None = None

    def localized(self, locale: Any) -> tuple[str, str]:
        """(path, description) in `locale`, each falling back to the English base."""
        for candidate in _discord_locales(locale):
            if candidate in self.names:
                return self.names[candidate], self.descriptions.get(candidate, self.description)
        return " ".join(self.path), self.description

    def shown(self, locale: Any) -> str:
        """A mention when the id is known (each client shows its own language), else the
        localized path in backticks."""
        if self.root_id is not None:
            return f"</{' '.join(self.path)}:{self.root_id}>"
        return f"`/{self.localized(locale)[0]}`"


def _discord_locales(locale: Any) -> list[str]:
    """gettext candidates (`ja`, `en_US` → `en`) in Discord's spelling (`en-US`)."""
    return [name.replace("_", "-") for name in locale_candidates(locale)]


def named_commands(payloads: Iterable[Mapping[str, Any]], ids: Mapping[str, int]) -> dict[tuple[str, ...], NamedCommand]:
    """Every runnable command in the synced payloads, by English path; `ids` by root name."""
    found: dict[tuple[str, ...], NamedCommand] = {}
    for root in payloads:
        for chain in _leaves(root, ()):
            path = tuple(node["name"] for node in chain)
            locales = set().union(*(node.get("name_localizations") or {} for node in chain))
            names = {loc: " ".join((node.get("name_localizations") or {}).get(loc, node["name"]) for node in chain)
                     for loc in locales}
            leaf = chain[-1]
            found[path] = NamedCommand(path, leaf.get("description", ""), names,
                                       dict(leaf.get("description_localizations") or {}), ids.get(root["name"]))
    return found


def _leaves(node: Mapping[str, Any], above: tuple[Mapping[str, Any], ...]) -> Iterator[tuple[Mapping[str, Any], ...]]:
    chain = (*above, node)
    children = [o for o in node.get("options") or [] if o.get("type") in (SUBCOMMAND, SUBCOMMAND_GROUP)]
    if not children:
        yield chain
        return
    for child in children:
        yield from _leaves(child, chain)


_installed: dict[tuple[str, ...], NamedCommand] = {}


async def name_commands(tree: app_commands.CommandTree, *, syncs: bool) -> None:
    """Sync the tree (`syncs`) or fetch what was synced, and install every command's names
    with its id. The names are installed first, without ids, so the descriptions the sync
    sends already name commands by their localized paths; a fetch that fails leaves them so."""
    translator = tree.translator
    payloads = [await c.get_translated_payload(tree, translator) for c in tree.get_commands()] \
        if translator is not None else [c.to_dict(tree) for c in tree.get_commands()]
    install(named_commands(payloads, {}))
    try:
        synced = await tree.sync() if syncs else await tree.fetch_commands()
    except discord.HTTPException as error:
        if syncs:
            raise
        log.warning("the commands' ids could not be read (%s): hints name commands by their paths", error.status)
        return
    install(named_commands(payloads, {c.name: c.id for c in synced}))


def install(commands: Mapping[tuple[str, ...], NamedCommand]) -> None:
    """This process's commands, after the tree is synced (or its ids fetched)."""
    _installed.clear()
    _installed.update(commands)


def installed() -> Mapping[tuple[str, ...], NamedCommand]:
    return _installed


def for_discord(text: str, locale: Any, *, mentions: bool = True) -> str:
    """`text` with each command path it names shown to a Discord reader in `locale`: a
    mention (unless `mentions` is False: a command's description cannot show one), or the
    localized path; a path the bot does not have stays as written."""
    return rendered(text, locale, _installed, mentions=mentions)


def rendered(text: str, locale: Any, commands: Mapping[tuple[str, ...], NamedCommand], *,
             mentions: bool = True) -> str:
    """`for_discord` on the given `commands` (pure)."""
    if not commands or "/" not in text:
        return text
    return WRITTEN_PATH.sub(lambda m: _shown(m, locale, commands, mentions), text)


def _shown(match: re.Match[str], locale: Any, commands: Mapping[tuple[str, ...], NamedCommand],
           mentions: bool) -> str:
    opened, words, closed = match.group(1), match.group(2).split(" "), match.group(3)
    for size in range(len(words), 0, -1):
        command = commands.get(tuple(words[:size]))
        if command is not None:
            break
    else:
        return match.group(0)
    rest = " ".join(words[size:])
    if command.root_id is None or not mentions:  # the localized path, in the backticks it was written in
        return f"{opened}/{' '.join(filter(None, (command.localized(locale)[0], rest)))}{closed}"
    if not opened:
        return " ".join(filter(None, (command.shown(locale), rest))) + closed
    # A mention inside a code span would show as code: it leaves the span, the rest stays in it.
    if not rest:
        return command.shown(locale) if closed else f"{command.shown(locale)} `"
    return f"{command.shown(locale)} `{rest}{closed}"
