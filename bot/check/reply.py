"""The check's reply on Discord: the route, one row per check, then the fixes, in one
ephemeral message that fits Discord's limit.

A reply that would not fit gives up its last fixes first, then shortens its rows (a
failure's headline is what a row may lose), so every check keeps its mark.
"""

from __future__ import annotations

from bot.check.run import CheckReport
from bot.check.table import check_table
from bot.edge.command_names import for_discord
from bot.edge.limits import MESSAGE_LIMIT
from bot.errors.presentation import trim
from bot.repo.keys import KEYLESS_LEASE
from providers.i18n import t

REPLY_CHARS = MESSAGE_LIMIT - 100  # room for Discord's own decorations of an ephemeral reply
SHORT_ROW = 160  # a row shortened to fit keeps its mark, check, time and the start of why
BULLET = "• "


def route_title(report: CheckReport, locale: str | None, title: str, *, operator_key_shown: bool = True) -> str:
    """The title line (`title`: the catalog key of its form), naming the model and the key
    by its masked tail only; the operator's own key not even so where a server's managers
    read it (`operator_key_shown` False), as `/status` keeps it from them."""
    route = report.route
    if route.lease.ref == KEYLESS_LEASE.ref:
        masked = t("commands.check.keyless", locale)
    elif route.lease.ref.kind == "environment" and not operator_key_shown:
        masked = t("commands.check.operator_key", locale)
    else:
        masked = route.lease.masked
    return t(title, locale, provider=route.target.provider.value, model=route.target.model, masked=masked)


def check_reply(report: CheckReport, title: str, locale: str | None, notes: tuple[str, ...] = ()) -> str:
    """The whole reply: `title`, any `notes` under it, the rows and the fixes."""
    table = check_table(report, locale)
    rows, fixes = ([for_discord(line, locale) for line in lines] for lines in (table.rows, table.fixes))
    return fitted([title, *notes, *rows], fixes, f"**{t('commands.check.fixes', locale)}**")


def fitted(lines: list[str], fixes: list[str], fixes_title: str, limit: int = REPLY_CHARS) -> str:
    """`lines`, then the fixes under their title, within `limit` characters."""
    shown = list(fixes)
    while True:
        body = [*lines, fixes_title, *(BULLET + fix for fix in shown)] if shown else list(lines)
        text = "\n".join(body)
        if len(text) <= limit or not shown:
            break
        shown.pop()
    if len(text) > limit:
        text = "\n".join(trim(line, SHORT_ROW) for line in lines)
    return trim(text, limit)
