"""A real LLMBot against the fake Discord (which serves member attachments) and the
replay provider, routed by the operator's environment default to one API family."""

from __future__ import annotations

import pytest

from tests.support.drive_discord_client import fake_discord, llmbot_factory  # noqa: F401


@pytest.fixture
def family_bot(tmp_path, provider_server):
    """`family_bot(provider)`: the bot whose default route is `provider` on the replay server."""
    make = llmbot_factory(tmp_path, "attachments.sqlite3")

    def for_provider(provider: str = "openai"):
        base = f"{provider_server.url}/v1" if provider == "openai" else provider_server.url
        return make(ALLOW_PRIVATE_ENDPOINTS="true", DEFAULT_TEXT_PROVIDER=provider,
                    DEFAULT_TEXT_MODEL="vision-model", DEFAULT_TEXT_BASE_URL=base,
                    DEFAULT_TEXT_API_KEYS="sk-attach-test")

    return for_provider
