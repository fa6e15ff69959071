"""What every delivered answer must satisfy, checked on the fake Discord's message store."""

from __future__ import annotations

import re

from tests.fakes.discord_server import FakeDiscord, StoredMessage

FENCE_LINE = re.compile(r"^\s*```[\w+-]*\s*$", re.MULTILINE)
INDICATOR = "▌"


def answer_messages(fake: FakeDiscord) -> list[StoredMessage]:
    """The bot's text messages in the main channel that still exist, oldest first."""
    return [m for m in fake.bot_messages(fake.channel_id) if not m.deleted and m.content and not m.embeds]


def words_without_fences(text: str) -> str:
    """Text with fence lines removed and whitespace collapsed: what a reader reads."""
    return " ".join(FENCE_LINE.sub(" ", text).split())


def assert_delivered(fake: FakeDiscord, expected: str) -> list[StoredMessage]:
    """<= 2,000 characters each, balanced fences, no indicator left, nothing lost or doubled."""
    messages = answer_messages(fake)
    assert messages, "no answer was delivered"
    for m in messages:
        assert len(m.content) <= 2000, len(m.content)
        assert len(FENCE_LINE.findall(m.content)) % 2 == 0, f"unbalanced fences in:\n{m.content}"
        assert INDICATOR not in m.content
    joined = "\n".join(m.content for m in messages)
    assert words_without_fences(joined) == words_without_fences(expected)
    return messages
