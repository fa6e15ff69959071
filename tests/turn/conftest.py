"""A real LLMBot (SQLite file, fixed encryption key) against the fake Discord, plus
helpers that store a server's configuration the way the slash commands do."""

from __future__ import annotations

import pytest

from tests.support.drive_discord_client import fake_discord, llmbot_factory  # noqa: F401


@pytest.fixture
def turn_bot(tmp_path):
    """`turn_bot(**settings)`: the replay provider lives on 127.0.0.1, so private
    endpoints are allowed (the operator's switch) unless a test says otherwise."""
    make = llmbot_factory(tmp_path, "turn.sqlite3")

    def turn_bot_with(**env):
        return make(**{"ALLOW_PRIVATE_ENDPOINTS": "true", **env})

    return turn_bot_with
