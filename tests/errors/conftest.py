"""The fake Discord for the tests here that run the real bot (the error detail's routing)."""

from __future__ import annotations

from tests.support.drive_discord_client import fake_discord  # noqa: F401
