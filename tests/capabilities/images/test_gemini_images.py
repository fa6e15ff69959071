"""Gemini image models through the real google-genai SDK against the local fake: the
`generateContent` body the SDK sent (the prompt, the image to change as an inline part,
IMAGE in the response modalities, the size as an aspect ratio), the answer's image (not
the thought draft), safety blocks of the prompt and of the image as ImageRefused, and
failures naming their kind."""

from __future__ import annotations

import base64

import pytest

from providers.images import ImageAsk, ImageFailed, ImageRefused
from providers.images.gemini_images import GeminiImages
from tests.support.fake_image_provider import IMAGE_KEY, FakeImageProvider, png

MODEL = "gemini-2.5-flash-image"


def route(fake: FakeImageProvider, model: str = MODEL, key: str = IMAGE_KEY) -> GeminiImages:
    return GeminiImages(model=model, api_key=key, base_url=fake.root_url)


async def test_the_prompt_goes_with_image_output_and_the_answers_image_comes_back() -> None:
    async with FakeImageProvider() as fake:
        drawn = await route(fake).draw(ImageAsk("a paper crane", "1536x1024"))
    [seen] = fake.requests
    assert seen.path == f"/v1beta/models/{MODEL}:generateContent"
    assert seen.headers["x-goog-api-key"] == IMAGE_KEY
    assert seen.fields["contents"] == [{"role": "user", "parts": [{"text": "a paper crane"}]}]
    assert seen.fields["generationConfig"] == {"responseModalities": ["TEXT", "IMAGE"],
                                               "imageConfig": {"aspectRatio": "3:2"}}
    assert (drawn.data, drawn.mime) == (fake.image, "image/png")  # not the thought draft


async def test_the_image_to_change_goes_first_as_inline_data() -> None:
    source = png((1, 2, 3))
    async with FakeImageProvider() as fake:
        await route(fake).draw(ImageAsk("make it night", "1024x1536", source, "day.png", "image/png"))
    [seen] = fake.requests
    # The SDK writes the inline part's type as `mime_type` (proto JSON takes either spelling).
    assert seen.fields["contents"][0]["parts"] == [
        {"inlineData": {"data": base64.b64encode(source).decode(), "mime_type": "image/png"}},
        {"text": "make it night"}]
    assert seen.fields["generationConfig"]["imageConfig"] == {"aspectRatio": "2:3"}


@pytest.mark.parametrize(("prompt", "reason"), [("something forbidden", "PROHIBITED_CONTENT"),
                                                ("an unsafe output", "IMAGE_SAFETY")])
async def test_safety_blocks_are_image_refused(prompt: str, reason: str) -> None:
    async with FakeImageProvider() as fake:
        with pytest.raises(ImageRefused) as refused:
            await route(fake).draw(ImageAsk(prompt, "1024x1024"))
    assert str(refused.value) == reason


async def test_failures_name_their_kind() -> None:
    async with FakeImageProvider() as fake:
        with pytest.raises(ImageFailed) as bad_key:
            await route(fake, key="AIza-wrong").draw(ImageAsk("a cat", "1024x1024"))
        with pytest.raises(ImageFailed) as text_only:
            await route(fake, "gemini-2.5-flash").draw(ImageAsk("a cat", "1024x1024"))
        fake.status = 503
        with pytest.raises(ImageFailed) as down:
            await route(fake).draw(ImageAsk("a cat", "1024x1024"))
        port = fake.port
    with pytest.raises(ImageFailed) as gone:
        await GeminiImages(model=MODEL, api_key=IMAGE_KEY, base_url=f"http://127.0.0.1:{port}").draw(
            ImageAsk("a cat", "1024x1024"))
    assert [f.value.kind for f in (bad_key, text_only, down, gone)] == ["key", "model", "failed", "unreachable"]
    assert not any("AIza-wrong" in str(f.value) for f in (bad_key, text_only, down, gone))
