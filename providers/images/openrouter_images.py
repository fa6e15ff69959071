"""OpenRouter's image-output models (`google/gemini-2.5-flash-image`, FLUX, …) through chat
completions with `modalities`, by the official `openai` SDK (OpenRouter speaks its API).

The request is one user message (the prompt, and the image to change as a data URL
`image_url` part) with `modalities: ["image", "text"]` and the size as OpenRouter's
`image_config.aspect_ratio`; the image comes back in the assistant message's `images`
list as a base64 data URL. A safety refusal is a choice ending `content_filter` (or whose
`native_finish_reason` is the model's safety one), or OpenRouter's moderation refusing the
input (403 naming it flagged): `ImageRefused`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import openai

from providers.error_body import error_fields
from providers.http_transport import sdk_http_client
from providers.identity import Provider
from providers.images.ask import (
    ASPECT_RATIOS,
    SAFETY_ENDINGS,
    DrawnImage,
    ImageAsk,
    ImageFailed,
    ImageRefused,
)
from providers.images.openai_images import DRAW_TIMEOUT, KINDS
from providers.openai_compat.request import DEFAULT_BASE_URLS
from providers.safe_transport import RequestRefused

DATA_URL_PREFIX = "data:"


def request_body(model: str, ask: ImageAsk) -> dict[str, Any]:
    """The chat completion's arguments (OpenRouter's own fields go as `extra_body`)."""
    content: Any = ask.prompt
    if ask.source is not None:
        data_url = f"data:{ask.source_mime};base64,{base64.b64encode(ask.source).decode()}"
        content = [{"type": "text", "text": ask.prompt}, {"type": "image_url", "image_url": {"url": data_url}}]
    return {"model": model, "messages": [{"role": "user", "content": content}], "stream": False,
            "extra_body": {"modalities": ["image", "text"],
                           "image_config": {"aspect_ratio": ASPECT_RATIOS.get(ask.size, "1:1")}}}


def image_of(data_url: str) -> DrawnImage:
    """A `data:image/png;base64,…` URL's image; ImageFailed for anything else (a remote URL
    is not fetched: the bot reaches only the route's address)."""
    header, _, encoded = data_url.partition(",")
    if not header.startswith(DATA_URL_PREFIX) or not header.endswith(";base64"):
        raise ImageFailed("no_image", "the image was not a base64 data URL")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ImageFailed("no_image", "the image's data URL was not base64") from None
    return DrawnImage(data, header[len(DATA_URL_PREFIX):].removesuffix(";base64") or "image/png")


def drawn_from(answer: dict[str, Any]) -> DrawnImage:
    """The first image of a chat completion (as a dict); ImageRefused for a safety ending."""
    choices = answer.get("choices") or []
    if not choices:
        raise ImageFailed("no_image", "the answer held no choice")
    choice = choices[0]
    native = choice.get("native_finish_reason")
    if choice.get("finish_reason") == "content_filter" or native in SAFETY_ENDINGS:
        raise ImageRefused(str(native or "content_filter"))
    images = (choice.get("message") or {}).get("images") or []
    urls = [(image.get("image_url") or {}).get("url") for image in images if isinstance(image, dict)]
    if not urls or not isinstance(urls[0], str):
        raise ImageFailed("no_image", f"the answer held no image (finish reason {choice.get('finish_reason')})")
    return image_of(urls[0])


def failure_of(exc: Exception) -> Exception:
    """OpenRouter's moderation (403, flagged input) as ImageRefused; other errors by kind."""
    if isinstance(exc, openai.APIStatusError):
        message, code, _type, details = error_fields(exc.body)
        if exc.status_code == 403 and ("flagged" in (message or "").lower() or isinstance(details, dict)
                                       and details.get("reasons")):
            return ImageRefused("moderation")
        return ImageFailed(KINDS.get(exc.status_code, "failed"), f"status {exc.status_code} ({code or 'no code'})")
    if isinstance(exc, RequestRefused):
        return ImageFailed("refused", str(exc))
    return ImageFailed("unreachable", type(exc).__name__)


class OpenRouterImages:
    """One OpenRouter image-output model with one key."""

    def __init__(self, *, model: str, api_key: str, base_url: str | None = None) -> None:
        self.model = model
        self.base_url = base_url or DEFAULT_BASE_URLS[Provider.OPENROUTER]
        self._key = api_key

    async def draw(self, ask: ImageAsk) -> DrawnImage:
        """The image for `ask`; ImageRefused or ImageFailed otherwise."""
        client = openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0, timeout=DRAW_TIMEOUT,
                                    http_client=sdk_http_client(openai.DefaultAsyncHttpxClient))
        async with client:
            try:
                response = await client.chat.completions.create(**request_body(self.model, ask))
            except (openai.OpenAIError, RequestRefused) as exc:
                raise failure_of(exc) from None
        return drawn_from(response.model_dump())
