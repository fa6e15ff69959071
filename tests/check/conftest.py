"""A real LLMBot (SQLite file, fixed encryption key) against the fake Discord for the
route checks, and a server set up the way the slash commands store it."""

from __future__ import annotations

import pytest

from tests.support.drive_discord_client import fake_discord, llmbot_factory  # noqa: F401


@pytest.fixture
def check_bot(tmp_path):
    """`check_bot(**settings)`: the replay provider lives on 127.0.0.1, so private endpoints
    are allowed (the operator's switch) unless a test says otherwise."""
    make = llmbot_factory(tmp_path, "check.sqlite3")

    def check_bot_with(**env):
        return make(**{"ALLOW_PRIVATE_ENDPOINTS": "true", **env})

    return check_bot_with
