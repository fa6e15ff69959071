"""OpenRouter's image-output models through the real openai SDK against the local fake:
the chat completion the SDK sent (`modalities`, `image_config`, the image to change as a
data URL part), the image from the message's `images`, moderation and a safety ending as
ImageRefused, failures by kind."""

from __future__ import annotations

import base64

import pytest

from providers.images import ImageAsk, ImageFailed, ImageRefused
from providers.images.openrouter_images import OpenRouterImages
from tests.support.fake_image_provider import IMAGE_KEY, FakeImageProvider, png

MODEL = "google/gemini-2.5-flash-image"


def route(fake: FakeImageProvider, key: str = IMAGE_KEY) -> OpenRouterImages:
    return OpenRouterImages(model=MODEL, api_key=key, base_url=fake.openrouter_url)


async def test_the_prompt_asks_for_image_output_and_the_data_url_comes_back() -> None:
    async with FakeImageProvider() as fake:
        drawn = await route(fake).draw(ImageAsk("a koi pond", "1536x1024"))
    [seen] = fake.requests
    assert seen.path == "/api/v1/chat/completions"
    assert seen.fields == {"model": MODEL, "messages": [{"role": "user", "content": "a koi pond"}], "stream": False,
                           "modalities": ["image", "text"], "image_config": {"aspect_ratio": "3:2"}}
    assert seen.headers["Authorization"] == f"Bearer {IMAGE_KEY}"
    assert (drawn.data, drawn.mime) == (fake.image, "image/png")


async def test_the_image_to_change_is_a_data_url_part() -> None:
    source = png((9, 9, 9))
    async with FakeImageProvider() as fake:
        await route(fake).draw(ImageAsk("add a moon", "1024x1024", source, "sky.webp", "image/webp"))
    assert fake.requests[0].fields["messages"][0]["content"] == [
        {"type": "text", "text": "add a moon"},
        {"type": "image_url", "image_url": {"url": "data:image/webp;base64," + base64.b64encode(source).decode()}}]


@pytest.mark.parametrize(("prompt", "reason"), [("something forbidden", "moderation"),
                                                ("an unsafe output", "IMAGE_SAFETY")])
async def test_moderation_and_a_safety_ending_are_image_refused(prompt: str, reason: str) -> None:
    async with FakeImageProvider() as fake:
        with pytest.raises(ImageRefused) as refused:
            await route(fake).draw(ImageAsk(prompt, "1024x1024"))
    assert str(refused.value) == reason


async def test_failures_name_their_kind() -> None:
    async with FakeImageProvider() as fake:
        with pytest.raises(ImageFailed) as bad_key:
            await route(fake, key="sk-or-wrong").draw(ImageAsk("a cat", "1024x1024"))
        fake.status = 429
        with pytest.raises(ImageFailed) as busy:
            await route(fake).draw(ImageAsk("a cat", "1024x1024"))
    assert [bad_key.value.kind, busy.value.kind] == ["key", "busy"]
    assert "sk-or-wrong" not in str(bad_key.value)
