"""The fake image provider, and the bot's settings naming it as the operator's image route."""

from __future__ import annotations

import pytest

from tests.support.fake_image_provider import IMAGE_KEY, FakeImageProvider


@pytest.fixture
async def image_provider():
    async with FakeImageProvider() as fake:
        yield fake


def image_route(fake: FakeImageProvider, **more: str) -> dict[str, str]:
    """The operator's image route on the fake (a custom endpoint on loopback, which the
    operator's own address may be)."""
    return {"DEFAULT_IMAGE_PROVIDER": "custom", "DEFAULT_IMAGE_MODEL": "gpt-image-1",
            "DEFAULT_IMAGE_BASE_URL": fake.base_url, "DEFAULT_IMAGE_API_KEYS": IMAGE_KEY, **more}


def gemini_route(fake: FakeImageProvider, **more: str) -> dict[str, str]:
    """The operator's image route on a Gemini image model, the fake standing for Google."""
    return {"DEFAULT_IMAGE_PROVIDER": "google", "DEFAULT_IMAGE_MODEL": "gemini-2.5-flash-image",
            "DEFAULT_IMAGE_BASE_URL": fake.root_url, "DEFAULT_IMAGE_API_KEYS": IMAGE_KEY, **more}


def openrouter_route(fake: FakeImageProvider, **more: str) -> dict[str, str]:
    """The operator's image route on an OpenRouter image-output model, the fake standing for it."""
    return {"DEFAULT_IMAGE_PROVIDER": "openrouter", "DEFAULT_IMAGE_MODEL": "google/gemini-2.5-flash-image",
            "DEFAULT_IMAGE_BASE_URL": fake.openrouter_url, "DEFAULT_IMAGE_API_KEYS": IMAGE_KEY, **more}
