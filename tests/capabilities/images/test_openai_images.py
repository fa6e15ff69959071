"""The Images API route through the real openai SDK against the local fake, which checks
the request as OpenAI documents it: what the SDK sent (generations as JSON, edits as
multipart), the image decoded, a safety refusal as ImageRefused and every other failure
as ImageFailed naming its kind, with no key in it."""

from __future__ import annotations

import pytest

from providers.endpoint_check import EndpointPolicy
from providers.identity import Provider
from providers.images import ImageAsk, ImageFailed, ImageRefused
from providers.images.openai_images import OpenAIImages
from tests.support.fake_image_provider import IMAGE_KEY, FakeImageProvider, png


def route(fake: FakeImageProvider, model: str = "gpt-image-1", key: str = IMAGE_KEY) -> OpenAIImages:
    return OpenAIImages(Provider.CUSTOM, model=model, api_key=key, base_url=fake.base_url,
                        policy=EndpointPolicy(allow_private=True))


async def test_a_gpt_image_prompt_is_sent_as_documented_and_its_png_comes_back() -> None:
    async with FakeImageProvider() as fake:
        drawn = await route(fake).draw(ImageAsk("a red fox in snow", "1536x1024"))
    [seen] = fake.requests
    assert seen.path == "/v1/images/generations"
    assert seen.fields == {"model": "gpt-image-1", "prompt": "a red fox in snow", "n": 1, "size": "1536x1024"}
    assert seen.headers["Authorization"] == f"Bearer {IMAGE_KEY}"
    assert (drawn.data, drawn.mime, drawn.extension) == (fake.image, "image/png", "png")


async def test_dall_e_is_asked_for_base64_json() -> None:
    async with FakeImageProvider() as fake:
        drawn = await route(fake, "dall-e-3").draw(ImageAsk("a lighthouse", "1024x1024"))
    assert fake.requests[0].fields["response_format"] == "b64_json"
    assert drawn.data == fake.image


async def test_an_image_to_change_goes_to_edits_as_multipart() -> None:
    source = png((200, 10, 10))
    async with FakeImageProvider() as fake:
        drawn = await route(fake).draw(ImageAsk("make it blue", "1024x1024", source, "cat.png", "image/png"))
    [seen] = fake.requests
    assert seen.path == "/v1/images/edits"
    assert seen.fields == {"model": "gpt-image-1", "prompt": "make it blue", "n": "1", "size": "1024x1024"}
    assert seen.files == {"image": ("cat.png", "image/png", source)}
    assert drawn.data == fake.image


@pytest.mark.parametrize("model", ["gpt-image-1", "dall-e-3"])
async def test_the_safety_systems_refusal_is_image_refused(model: str) -> None:
    async with FakeImageProvider() as fake:
        with pytest.raises(ImageRefused) as refused:
            await route(fake, model).draw(ImageAsk("something forbidden", "1024x1024"))
    assert str(refused.value) == ("moderation_blocked" if model == "gpt-image-1" else "content_policy_violation")


async def test_failures_name_their_kind_and_never_the_key() -> None:
    async with FakeImageProvider() as fake:
        with pytest.raises(ImageFailed) as bad_key:
            await route(fake, key="sk-wrong-key-9999").draw(ImageAsk("a cat", "1024x1024"))
        with pytest.raises(ImageFailed) as no_model:
            await route(fake, "imagen-x").draw(ImageAsk("a cat", "1024x1024"))
        fake.status = 429
        with pytest.raises(ImageFailed) as busy:
            await route(fake).draw(ImageAsk("a cat", "1024x1024"))
        fake.status = 500
        with pytest.raises(ImageFailed) as down:
            await route(fake).draw(ImageAsk("a cat", "1024x1024"))
        port = fake.port
    with pytest.raises(ImageFailed) as gone:
        await OpenAIImages(Provider.CUSTOM, model="gpt-image-1", api_key=IMAGE_KEY,
                           base_url=f"http://127.0.0.1:{port}/v1",
                           policy=EndpointPolicy(allow_private=True)).draw(ImageAsk("a cat", "1024x1024"))
    kinds = [failure.value.kind for failure in (bad_key, no_model, busy, down, gone)]
    assert kinds == ["key", "model", "busy", "failed", "unreachable"]
    assert not any("sk-wrong" in str(failure.value) for failure in (bad_key, no_model, busy, down, gone))


async def test_a_custom_endpoint_on_a_private_address_needs_the_operators_word() -> None:
    async with FakeImageProvider() as fake:
        closed = OpenAIImages(Provider.CUSTOM, model="gpt-image-1", api_key=IMAGE_KEY, base_url=fake.base_url)
        with pytest.raises(ImageFailed) as refused:
            await closed.draw(ImageAsk("a cat", "1024x1024"))
    assert refused.value.kind == "refused" and "ALLOW_PRIVATE_ENDPOINTS" in str(refused.value)
    assert fake.requests == []
