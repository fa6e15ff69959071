"""Which questions are offered `set_reminder` (pure): a question that names a reminder in
English or Japanese is; an ordinary question is not."""

from __future__ import annotations

import pytest

from bot.capabilities.reminders.asking import asks_for_reminder


@pytest.mark.parametrize("text", [
    "remind me in an hour to stretch", "Set a reminder for 9am", "set an alarm for 6:30",
    "start a timer for 10 minutes", "ping me tomorrow about the call", "tell me at 5 to leave",
    "Notify me in 20 min", "1時間後にリマインドして", "明日思い出させて", "10分後に教えて", "5時に知らせて",
])
def test_a_question_naming_a_reminder_is_offered_the_tool(text: str) -> None:
    assert asks_for_reminder(text)


@pytest.mark.parametrize("text", [
    "what is the capital of France?", "summarize this page", "remembering the 90s, what was popular?",
    "東京の天気を教えて", "この文章を要約して",
])
def test_an_ordinary_question_is_not(text: str) -> None:
    assert not asks_for_reminder(text)
