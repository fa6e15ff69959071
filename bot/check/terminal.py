"""`python -m bot check`: every check of the operator's default route, in a terminal.

The route is the one `python -m bot ask` asks (DEFAULT_TEXT_*, its first key), found as
the bot finds it (`EnvironmentCredentials`); web search is checked when WEB_SEARCH is on.
No Discord token and no database are needed, so nothing is counted or limited here.

Exit status: 0 when every check passed (skipped ones included), 1 when one failed (the
table says which and how to fix it), 2 when the settings are incomplete or invalid (one
line naming the setting, as `ask` says it).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from bot.ask import EXIT_SETTINGS, route_line, terminal_locale, terminal_settings
from bot.check.reply import BULLET, route_title
from bot.check.route import Refused, server_route
from bot.check.run import CheckReport, check_route
from bot.check.table import check_table
from bot.load.config_cache import ConfigSnapshot
from bot.settings import Settings
from bot.turn import EnvironmentCredentials
from bot.turn.access import ProviderAccess
from providers.client_pool import ClientPool
from providers.i18n import t

EXIT_PASSED, EXIT_FAILED = 0, 1
USAGE = "usage: python -m bot check  (or: make check)"


def report_text(report: CheckReport, locale: str | None) -> str:
    """The title, one row per check, then the fixes: plain text for a terminal."""
    table = check_table(report, locale, "terminal")
    lines = [route_title(report, locale, "commands.check.title_default"), *table.rows]
    if table.fixes:
        lines += [t("commands.check.fixes", locale) + ":", *(BULLET + fix for fix in table.fixes)]
    return "\n".join(lines)


async def check(settings: Settings, out: TextIO, err: TextIO, locale: str | None = None) -> int:
    """Every check of the default route, the table to `out`; the exit status."""
    clients = ClientPool(settings.PROVIDER_HTTP_TRANSPORT, settings.PROVIDER_READ_INTERVAL_MS / 1000)
    try:
        found = await server_route(EnvironmentCredentials(settings), ConfigSnapshot("none"), settings.WEB_SEARCH)
        report = None if isinstance(found, Refused) else await check_route(
            found.route, ProviderAccess.of(settings, clients), settings)
    finally:
        await clients.aclose()
    if report is None:  # settings passed, yet the model cannot be used (its reason was logged)
        print(route_line(settings), file=err)
        return EXIT_FAILED
    print(report_text(report, locale), file=out)
    if report.passed:
        return EXIT_PASSED
    print(route_line(settings), file=err)
    return EXIT_FAILED


def check_main(argv: list[str]) -> int:
    """`python -m bot check`: settings as `python -m bot` reads them, minus DISCORD_TOKEN."""
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return EXIT_PASSED
    if argv:
        print(USAGE, file=sys.stderr)
        return EXIT_SETTINGS
    settings = terminal_settings()
    if settings is None:
        return EXIT_SETTINGS
    try:
        return asyncio.run(check(settings, sys.stdout, sys.stderr, terminal_locale()))
    except KeyboardInterrupt:
        return 130
