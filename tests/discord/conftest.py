from tests.support.drive_discord_client import fake_discord  # noqa: F401
