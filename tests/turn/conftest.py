"""A real LLMBot (SQLite file, fixed encryption key) against the fake Discord, plus
helpers that store a server's configuration the way the slash commands do."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from tests.fakes.discord_harness import fake_discord  # noqa: F401


@pytest.fixture
def turn_bot(tmp_path):
    from bot.app import LLMBot
    from bot.settings import load_settings
    from tests.fakes.discord_harness import fast_ready_kwargs

    key = Fernet.generate_key().decode()

    def make(**env):
        values = {"DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/turn.sqlite3",
                  "BOT_ENCRYPTION_KEY": key, **env}
        return LLMBot(load_settings(_env_file=None, **values), **fast_ready_kwargs())

    return make
