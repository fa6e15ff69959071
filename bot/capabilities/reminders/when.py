"""When a reminder is due: the member's words ("in 10 minutes", "18:30", "tomorrow 9am",
"2026-12-24 09:00", "10分後", "明日 9時") read in the member's time zone.

Pure: no I/O, no clock of its own (the caller passes `now`). A small closed grammar is
written here rather than taken from a library: `dateparser` (the well-kept candidate)
loads hundreds of locale files and regexes at import (tens of MiB, far over what an idle
bot may carry, `tests/test_idle_imports.py`), reads "in 1h30m" and "6:30pm" in the past
or not at all depending on its settings, and guesses freely (a typo becomes some date),
where a reminder must refuse what it did not understand and say so in one line.

Rules: a clock time alone that has already passed today means tomorrow; a time with
"today" or an explicit date in the past is refused, as is anything not after `now`; at
most `MAX_AHEAD` ahead. "in 1 day" is 24 hours of elapsed time. A wall-clock time that
a DST change skips is read with the offset before the change (it lands after the gap);
one that occurs twice is the first.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

MAX_AHEAD = timedelta(days=366)
Refusal = Literal["unparsed", "past", "too_far"]


class WhenRefused(ValueError):
    """The words name no time a reminder may have; `reason` says which refusal to show."""

    def __init__(self, reason: Refusal) -> None:
        super().__init__(reason)
        self.reason: Refusal = reason


_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "秒": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60, "分": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600, "時間": 3600,
    "d": 86400, "day": 86400, "days": 86400, "日": 86400,
    "w": 604800, "week": 604800, "weeks": 604800, "週間": 604800,
}
_UNIT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_AMOUNT = re.compile(rf"(\d+\s*|an?\s+)({_UNIT})(?![a-z])")  # "10m", "10 min", "an hour"
_RELATIVE_EN = re.compile(rf"^in\s+((?:(?:\d+\s*|an?\s+)(?:{_UNIT})(?![a-z])\s*(?:and\s+)?)+)$")
_RELATIVE_JA = re.compile(rf"^((?:\d+\s*(?:{_UNIT})\s*)+)(?:後|あと)$")
_CLOCK_EN = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$")
_CLOCK_JA = re.compile(r"^(午前|午後)?\s*(\d{1,2})時(?:\s*(\d{1,2})分|(半))?$")
_DATE = re.compile(r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$")
_DAYS = {"today": 0, "tomorrow": 1, "今日": 0, "きょう": 0, "明日": 1, "あした": 1, "明後日": 2, "あさって": 2}
_DAY_WORD = re.compile(r"^(" + "|".join(sorted(_DAYS, key=len, reverse=True)) + r")\s*(.*)$")


@dataclass(frozen=True)
class _Day:
    """The day a clock time is on: named ("tomorrow", a date) or not (today or tomorrow)."""

    on: date
    named: bool


def normalized(words: str) -> str:
    """Full-width digits and colons as ASCII (NFKC), lower case, single spaces."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", words)).strip().lower()


def parse_when(words: str, now: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant `words` name, in `zone`, after `now` (aware); WhenRefused otherwise."""
    text = normalized(words)
    due = _relative(text, now)
    if due is None:
        due = _absolute(text, now, zone)
    if due is None:
        raise WhenRefused("unparsed")
    if due <= now:
        raise WhenRefused("past")
    if due - now > MAX_AHEAD:
        raise WhenRefused("too_far")
    return due.astimezone(UTC)


def _relative(text: str, now: datetime) -> datetime | None:
    """"in 10 minutes", "in 1h30m", "in an hour", "10分後", "1時間30分後"."""
    match = _RELATIVE_EN.match(text) or _RELATIVE_JA.match(text)
    if match is None:
        return None
    seconds = 0
    for amount, unit in _AMOUNT.findall(match.group(1)):
        count = 1 if amount.strip() in ("a", "an") else int(amount)
        seconds += count * _UNITS[unit]
        if seconds > MAX_AHEAD.total_seconds() * 2:  # no overflow from "in 99999999999 weeks"
            return now + MAX_AHEAD * 2
    return now + timedelta(seconds=seconds)


def _absolute(text: str, now: datetime, zone: ZoneInfo) -> datetime | None:
    """A clock time, optionally after a day word or a date."""
    today = now.astimezone(zone).date()
    day, rest = _day_of(text, today)
    clock = _clock(rest)
    if clock is None or (day is None and rest != text):
        return None
    if day is None:
        day = _Day(today, named=False)
    due = _at(day.on, clock, zone)
    if not day.named and due <= now:
        due = _at(day.on + timedelta(days=1), clock, zone)
    return due


def _day_of(text: str, today: date) -> tuple[_Day | None, str]:
    """The day the words name first and the words after it (None: no day named)."""
    if (word := _DAY_WORD.match(text)) is not None:
        return _Day(today + timedelta(days=_DAYS[word.group(1)]), named=True), word.group(2).strip()
    head, _, rest = text.partition(" ")
    if (found := _DATE.match(head)) is None:
        return None, text
    try:
        on = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
    except ValueError:
        return None, ""
    return _Day(on, named=True), rest.strip()


def _clock(text: str) -> time | None:
    """"18:30", "6:30pm", "9am", "9時", "午後6時半", "9時30分"; None for anything else."""
    if (en := _CLOCK_EN.match(text)) is not None:
        hour, minute, half = int(en.group(1)), int(en.group(2) or 0), en.group(3)
        if en.group(2) is None and half is None:
            return None  # a bare number is not a time
    elif (ja := _CLOCK_JA.match(text)) is not None:
        hour, minute = int(ja.group(2)), 30 if ja.group(4) else int(ja.group(3) or 0)
        half = {"午前": "am", "午後": "pm"}.get(ja.group(1) or "")
    else:
        return None
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def _at(on: date, clock: time, zone: ZoneInfo) -> datetime:
    """The instant the wall clock in `zone` shows `clock` on `on` (see the module docstring)."""
    return datetime.combine(on, clock, tzinfo=zone).astimezone(UTC)
