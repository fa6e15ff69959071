"""A real LLMBot (SQLite file, fixed encryption key) against the fake Discord, plus
helpers that store a server's configuration the way the slash commands do."""

from __future__ import annotations

import pytest

from tests.fakes.discord_harness import fake_discord, llmbot_factory  # noqa: F401


@pytest.fixture
def turn_bot(tmp_path):
    return llmbot_factory(tmp_path, "turn.sqlite3")
