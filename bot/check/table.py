"""A check's rows as lines of text, in the reader's language, for Discord and the terminal.

A row is its mark (✓ passed, ✗ failed, – skipped), its check and how long it took; a ✗
says what failed: the provider's failure kind with the error embed's headline and the
provider's own words (where the embed shows them), or what the answer lacked. The fixes are the error embed's own tips for each failure, chosen by
its kind and by whose key the route uses (`bot.errors.presentation`), each once.
Pure: no I/O beyond the cached catalog lookups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.check.run import CheckReport, CheckResult
from bot.errors import ErrorScene, resolve_presentation
from bot.errors.presentation import Audience, answered_at, trim
from providers.address import route_address
from providers.i18n import t
from providers.redaction import redact_secrets

MARKS = {"passed": "✓", "failed": "✗", "skipped": "–"}
HEADLINE_CHARS = 200  # of the headline and the provider's words: enough to name the failure
SAID_CHARS = 60
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Table:
    """The rows, one line each, and the fixes for the failed ones (tip texts, each once)."""

    rows: list[str]
    fixes: list[str]


def check_table(report: CheckReport, locale: str | None, audience: Audience = "discord") -> Table:
    """The rows and fixes; a terminal's fixes name `.env` settings (`bot.errors.terminal`)."""
    route = report.route
    secrets = tuple(s for s in (route.lease.secret,) if s)
    scene = ErrorScene(locale, route.credential_source, route.fallback_chain, known_secrets=secrets,
                       audience=audience, address=route_address(route.target.provider, route.target.base_url))
    rows: list[str] = []
    fixes: list[str] = []
    for result in report.results:
        rows.append(row_line(result, scene))
        if result.error is not None:
            for key in resolve_presentation(result.error, scene).tip_keys:
                tip = t(key, locale)
                if tip not in fixes:
                    fixes.append(tip)
    return Table(rows, fixes)


def row_line(result: CheckResult, scene: ErrorScene) -> str:
    """`✓ Streamed text · 1.2 s`, `✗ Image · 0.8 s — request_refused: …`, `– PDF — …`."""
    locale = scene.locale
    head = f"{MARKS[result.state]} {t(result.label, locale)}"
    if result.seconds is not None:
        head += " · " + t("commands.check.seconds", locale, seconds=f"{result.seconds:.1f}")
    why = _why(result, scene)
    return f"{head} — {why}" if why else head


def _why(result: CheckResult, scene: ErrorScene) -> str:
    if result.error is not None:
        shown = resolve_presentation(result.error, scene)  # the provider's words only where the embed shows them
        address = answered_at(result.error)  # a check is read by whoever set the address
        where = t("genai.detail.answered_at", scene.locale, address=address) if address else ""
        where = "" if where in shown.detail else where  # a terminal's detail names it already
        words = " ".join(_SPACE.sub(" ", part).strip() for part in (shown.headline, where, shown.detail) if part)
        return f"{result.error.kind}: {trim(words, HEADLINE_CHARS)}"
    if result.note is None:
        return ""
    return t(result.note, scene.locale, said=said(result.said, scene.known_secrets))


def said(text: str, secrets: tuple[str, ...] = ()) -> str:
    """What a model answered, on one line, short, without the markup that would break a
    row (a key never reaches a model, but its words are redacted like any shown text)."""
    flat = _SPACE.sub(" ", redact_secrets(text, secrets).replace("`", "'")).strip()
    return trim(flat, SAID_CHARS)
