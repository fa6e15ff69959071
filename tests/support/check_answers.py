"""What every delivered answer must satisfy, checked on the fake Discord's message store."""

from __future__ import annotations

import re
from typing import Any

from tests.support.fake_discord_server import FakeDiscord, StoredMessage

FENCE_LINE = re.compile(r"^\s*```[\w+-]*\s*$", re.MULTILINE)
INDICATOR = "▌"
NOTICE_PREFIX = "-# "  # Discord small print: how the bot marks a notice


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


def delivered(fake: FakeDiscord, expected: str) -> bool:
    """True once the answer is complete on Discord (a wait predicate)."""
    messages = answer_messages(fake)
    if not messages or any(INDICATOR in m.content for m in messages):
        return False
    return words_without_fences("\n".join(m.content for m in messages)) == words_without_fences(expected)


def assert_no_pings(fake: FakeDiscord) -> int:
    """Every message write the bot made forbade every ping; returns how many were checked."""
    writes = [r for r in fake.requests
              if r.method in ("POST", "PATCH") and "/messages" in r.path and r.body is not None]
    for request in writes:
        mentions = request.body.get("allowed_mentions")
        assert mentions is not None, f"{request.method} {request.path} had no allowed_mentions"
        assert mentions.get("parse") == [], mentions
        assert not mentions.get("users") and not mentions.get("roles"), mentions
        assert mentions.get("replied_user", False) is False, mentions
    return len(writes)


def plain_answer_messages(fake: FakeDiscord) -> list[StoredMessage]:
    """Answer text messages (the fallback notice and interaction replies excluded)."""
    return [m for m in answer_messages(fake)
            if not m.content.startswith(NOTICE_PREFIX) and m.webhook_token is None]


def notice_messages(fake: FakeDiscord) -> list[StoredMessage]:
    """The bot's small-print (`-# `) notices among the answer messages."""
    return [m for m in answer_messages(fake) if m.content.startswith(NOTICE_PREFIX)]


def answer_embeds(fake: FakeDiscord) -> list[dict[str, Any]]:
    """Every embed the bot posted in the main channel (error cards, thought logs)."""
    return [e for m in fake.bot_messages(fake.channel_id) if not m.deleted for e in m.embeds]


def embed_text(embed: dict[str, Any]) -> str:
    """Title, description and fields as one string, for `in` checks."""
    fields = " ".join(f"{f['name']} {f['value']}" for f in embed.get("fields", []))
    return f"{embed.get('title', '')} {embed.get('description', '')} {fields}"
