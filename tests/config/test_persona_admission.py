"""The pure halves of personas and admission: filling a persona never raises and leaves
what it does not know as typed; the admission decision for every kind of rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.question.admission import MessageFacts, RefusalThrottle, channel_admits, decide
from bot.question.persona import PromptFacts, fill, system_prompt_for
from bot.repo.controls import GuildControls

FACTS = PromptFacts("Botty", "Guild", "general", "Alice", datetime(2026, 5, 6, 23, 30, tzinfo=timezone(timedelta(hours=9))))


def test_known_names_are_filled_in_utc():
    assert fill("{bot}|{server}|{channel}|{user}|{date}|{time}", FACTS.values()) == \
        "Botty|Guild|general|Alice|2026-05-06|14:30 UTC"


@pytest.mark.parametrize("typed", ["{unknown}", "{0}", "{}", "{", "}", "{bot.__class__}", "{bot!r}", "{BOT}",
                                   "{user:>10}", "%(bot)s", "{{", "${bot"])
def test_anything_else_stays_as_typed(typed):
    assert fill(typed, FACTS.values()) == typed


def test_no_persona_gives_a_default_naming_the_bot_the_server_and_the_date():
    assert system_prompt_for(None, FACTS) == ("You are Botty, a helpful assistant chatting on Discord in the "
                                              "server Guild. Today is 2026-05-06.")
    dm = PromptFacts("Botty", None, "direct message", "Alice", FACTS.now)
    assert "direct message" in system_prompt_for(None, dm) and "Botty" in system_prompt_for(None, dm)


@given(st.text())
def test_filling_never_raises_and_keeps_text_without_known_names(text):
    filled = fill(text, FACTS.values())
    if not any(f"{{{name}}}" in text for name in FACTS.values().keys()):
        assert filled == text


def facts(**changes) -> MessageFacts:
    base = {"guild_id": 1, "channel_id": 100, "parent_id": None, "member_id": 7, "role_ids": frozenset({50}),
            "manager": False}
    return MessageFacts(**{**base, **changes})


@pytest.mark.parametrize(("message", "controls", "expected"), [
    (facts(), GuildControls(), ("answer", None)),
    (facts(), GuildControls(denied=frozenset({100})), ("ignore", None)),
    (facts(channel_id=900, parent_id=100), GuildControls(denied=frozenset({100})), ("ignore", None)),
    (facts(manager=True), GuildControls(denied=frozenset({100})), ("ignore", None)),
    (facts(), GuildControls(mode="allowlist"), ("ignore", None)),
    (facts(), GuildControls(mode="allowlist", allowed=frozenset({100})), ("answer", None)),
    (facts(channel_id=900, parent_id=100), GuildControls(mode="allowlist", allowed=frozenset({100})), ("answer", None)),
    (facts(channel_id=900, parent_id=100),
     GuildControls(mode="allowlist", allowed=frozenset({100}), denied=frozenset({900})), ("ignore", None)),
    (facts(), GuildControls(blocked_members=frozenset({7})), ("refuse", "blocked")),
    (facts(), GuildControls(blocked_roles=frozenset({50})), ("refuse", "blocked")),
    (facts(manager=True), GuildControls(blocked_members=frozenset({7})), ("answer", None)),
    (facts(), GuildControls(required_roles=frozenset({60})), ("refuse", "role_required")),
    (facts(), GuildControls(required_roles=frozenset({50, 60})), ("answer", None)),
    (facts(manager=True, role_ids=frozenset()), GuildControls(required_roles=frozenset({60})), ("answer", None)),
    (facts(), GuildControls(mode="allowlist", blocked_members=frozenset({7})), ("ignore", None)),
])
def test_decisions(message, controls, expected):
    decision = decide(message, controls, allow_dms=True)
    assert (decision.action, decision.reason) == expected


def test_dms_follow_the_operator_switch_and_unread_settings_admit():
    dm = facts(guild_id=None)
    assert decide(dm, None, allow_dms=True).action == "answer"
    assert (decide(dm, None, allow_dms=False).action, decide(dm, None, allow_dms=False).reason) == ("refuse", "dms_off")
    assert decide(facts(), None, allow_dms=False).action == "answer"  # the turn reports the database itself
    assert channel_admits(facts(), GuildControls()) is True


def test_a_refusal_is_said_once_an_hour_per_member_and_server():
    throttle = RefusalThrottle()
    assert throttle.allows(1, 7, now=0.0) is True
    assert throttle.allows(1, 7, now=3599.0) is False
    assert throttle.allows(2, 7, now=10.0) is True  # another server
    assert throttle.allows(1, 8, now=10.0) is True  # another member
    assert throttle.allows(1, 7, now=3600.0) is True


def test_utc_dates_come_from_the_moment_not_the_local_day():
    late = PromptFacts("B", "G", "c", "u", datetime(2026, 1, 1, 0, 30, tzinfo=UTC) - timedelta(hours=1))
    assert late.values()["date"] == "2025-12-31" and late.values()["time"] == "23:30 UTC"
