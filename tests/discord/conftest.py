from tests.fakes.discord_harness import fake_discord  # noqa: F401
