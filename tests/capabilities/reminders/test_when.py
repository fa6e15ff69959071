"""The reminder time parser (pure): every documented form, in the member's zone, the past
and the year bound refused, and properties over any amount, any zone and DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.capabilities.reminders.when import MAX_AHEAD, WhenRefused, parse_when

TOKYO, BERLIN, NEW_YORK = ZoneInfo("Asia/Tokyo"), ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
NOW = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)  # 01:00 on Dec 7 in Tokyo


def local(words: str, zone: ZoneInfo = TOKYO, now: datetime = NOW) -> datetime:
    due = parse_when(words, now, zone)
    assert due.tzinfo is UTC
    return due.astimezone(zone).replace(tzinfo=None)


@pytest.mark.parametrize(("words", "expected"), [
    ("in 10 minutes", datetime(2026, 12, 7, 1, 10)),
    ("in 2 hours", datetime(2026, 12, 7, 3, 0)),
    ("in 1 day", datetime(2026, 12, 8, 1, 0)),
    ("in 1h30m", datetime(2026, 12, 7, 2, 30)),
    ("in an hour", datetime(2026, 12, 7, 2, 0)),
    ("In 1 hour and 5 minutes", datetime(2026, 12, 7, 2, 5)),
    ("18:30", datetime(2026, 12, 7, 18, 30)),
    ("6:30pm", datetime(2026, 12, 7, 18, 30)),
    ("9am", datetime(2026, 12, 7, 9, 0)),
    ("12am", datetime(2026, 12, 8, 0, 0)),  # midnight today has passed: tomorrow's
    ("12pm", datetime(2026, 12, 7, 12, 0)),
    ("0:30", datetime(2026, 12, 8, 0, 30)),  # 00:30 passed (it is 01:00): tomorrow
    ("tomorrow 9am", datetime(2026, 12, 8, 9, 0)),
    ("tomorrow 18:30", datetime(2026, 12, 8, 18, 30)),
    ("today 15:00", datetime(2026, 12, 7, 15, 0)),
    ("2026-12-24 09:00", datetime(2026, 12, 24, 9, 0)),
    ("2026/12/24 9:00", datetime(2026, 12, 24, 9, 0)),
    ("10分後", datetime(2026, 12, 7, 1, 10)),
    ("1時間30分後", datetime(2026, 12, 7, 2, 30)),
    ("３日後", datetime(2026, 12, 10, 1, 0)),  # full-width digits
    ("明日 9時", datetime(2026, 12, 8, 9, 0)),
    ("明日9時30分", datetime(2026, 12, 8, 9, 30)),
    ("午後6時半", datetime(2026, 12, 7, 18, 30)),
    ("１８：３０", datetime(2026, 12, 7, 18, 30)),
])
def test_the_documented_forms(words: str, expected: datetime) -> None:
    assert local(words) == expected


@pytest.mark.parametrize(("words", "reason"), [
    ("", "unparsed"), ("soon", "unparsed"), ("9", "unparsed"), ("tomorrow", "unparsed"),
    ("25:00", "unparsed"), ("13pm", "unparsed"), ("2026-02-30 09:00", "unparsed"), ("in ten minutes", "unparsed"),
    ("tomorrow tomorrow 9am", "unparsed"), ("9am tomorrow please", "unparsed"), ("in 1 hour and", "unparsed"),
    ("in 0 minutes", "past"), ("2026-12-06 09:00", "past"), ("today 0:30", "past"),
    ("2028-01-01 09:00", "too_far"), ("in 400 days", "too_far"), ("in 99999999999999 weeks", "too_far"),
])
def test_refusals(words: str, reason: str) -> None:
    with pytest.raises(WhenRefused) as refused:
        parse_when(words, NOW, TOKYO)
    assert refused.value.reason == reason


ZONES = st.sampled_from(["UTC", "Asia/Tokyo", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
                         "America/St_Johns", "Pacific/Chatham", "Asia/Kolkata"])
MOMENTS = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC))


@settings(max_examples=300, deadline=None)
@given(minutes=st.integers(1, 366 * 24 * 60), now=MOMENTS, zone=ZONES)
def test_in_n_minutes_is_n_minutes_ahead_in_any_zone(minutes: int, now: datetime, zone: str) -> None:
    assert parse_when(f"in {minutes} minutes", now, ZoneInfo(zone)) == now + timedelta(minutes=minutes)
    assert parse_when(f"{minutes}分後", now, ZoneInfo(zone)) == now + timedelta(minutes=minutes)


@settings(max_examples=300, deadline=None)
@given(hour=st.integers(0, 23), minute=st.integers(0, 59), now=MOMENTS, zone=ZONES)
def test_a_clock_time_is_the_next_time_the_members_clock_shows_it(hour: int, minute: int, now: datetime,
                                                                  zone: str) -> None:
    """Within the next day (plus a DST change's hour), after now; its wall clock is the
    time asked for unless a DST change skipped that time on that day."""
    tz = ZoneInfo(zone)
    due = parse_when(f"{hour}:{minute:02d}", now, tz)
    assert now < due <= now + timedelta(hours=25)
    shown = due.astimezone(tz)
    skipped = (shown.hour, shown.minute) != (hour, minute)
    if skipped:  # a spring-forward gap: read with the offset before it, so it lands after the gap
        assert tz.utcoffset(shown.replace(tzinfo=None)) != tz.utcoffset((shown - timedelta(hours=2)).replace(tzinfo=None))


@settings(max_examples=200, deadline=None)
@given(words=st.text(max_size=40), now=MOMENTS, zone=ZONES)
def test_any_words_give_a_time_within_the_year_or_a_refusal(words: str, now: datetime, zone: str) -> None:
    try:
        due = parse_when(words, now, ZoneInfo(zone))
    except WhenRefused:
        return
    assert now < due <= now + MAX_AHEAD


def test_across_a_dst_change_the_clock_time_is_on_the_members_clock() -> None:
    """Berlin and New York leave summer time on different days: "tomorrow 9am" is 9:00 on
    each member's clock, whatever the offset was today."""
    berlin_eve = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)  # Oct 25: Berlin goes from +2 to +1
    assert parse_when("tomorrow 9am", berlin_eve, BERLIN) == datetime(2026, 10, 25, 8, 0, tzinfo=UTC)
    ny_eve = datetime(2026, 10, 31, 16, 0, tzinfo=UTC)  # Nov 1: New York goes from -4 to -5
    assert parse_when("tomorrow 9am", ny_eve, NEW_YORK) == datetime(2026, 11, 1, 14, 0, tzinfo=UTC)
    # "in 1 day" is 24 hours of elapsed time, whatever the clock does.
    assert parse_when("in 1 day", berlin_eve, BERLIN) == berlin_eve + timedelta(days=1)
    # 2:30 does not exist in Berlin on Mar 28, 2027: it lands after the gap, at 3:30 local.
    spring_eve = datetime(2027, 3, 27, 12, 0, tzinfo=UTC)
    due = parse_when("tomorrow 2:30", spring_eve, BERLIN)
    assert due.astimezone(BERLIN).replace(tzinfo=None) == datetime(2027, 3, 28, 3, 30)
