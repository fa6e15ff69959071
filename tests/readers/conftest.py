"""The bot of tests/capabilities/reading/attachments (a real LLMBot against the fake Discord and the replay
provider, routed to one API family), for the readers' end-to-end tests."""

from tests.capabilities.reading.attachments.conftest import family_bot  # noqa: F401
from tests.support.drive_discord_client import fake_discord  # noqa: F401
