"""Gemini image models ("Nano Banana": `gemini-2.5-flash-image`, `gemini-3-pro-image-preview`)
through `generateContent` with image output, by the official google-genai SDK.

The request is the prompt (after the image to change, when there is one, as an inline
part) with `responseModalities` TEXT and IMAGE and the size as `imageConfig.aspectRatio`;
the answer's image is a part with `inlineData` (the SDK decodes its base64). A thought
image (Gemini 3's drafts, `thought: true`) is not the answer: the last other image is.
Gemini refuses for safety inside a 200: `promptFeedback.blockReason` (the prompt), or a
candidate whose `finishReason` is a safety one (the image): `ImageRefused`.
"""

from __future__ import annotations

from typing import Any

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from providers.gemini.adapter import API_VERSION, SharedGeminiTransport
from providers.images.ask import (
    ASPECT_RATIOS,
    SAFETY_ENDINGS,
    DrawnImage,
    ImageAsk,
    ImageFailed,
    ImageRefused,
)
from providers.safe_transport import RequestRefused

DRAW_TIMEOUT_MS = 180_000
KINDS = {401: "key", 403: "key", 404: "model", 429: "busy"}


def request_parts(ask: ImageAsk) -> list[Any]:
    """The user turn: the image to change first (when there is one), then the prompt."""
    parts: list[Any] = []
    if ask.source is not None:
        parts.append(genai_types.Part.from_bytes(data=ask.source, mime_type=ask.source_mime))
    parts.append(genai_types.Part.from_text(text=ask.prompt))
    return parts


def request_config(ask: ImageAsk) -> genai_types.GenerateContentConfig:
    return genai_types.GenerateContentConfig(
        response_modalities=["TEXT", "IMAGE"],
        image_config=genai_types.ImageConfig(aspect_ratio=ASPECT_RATIOS.get(ask.size, "1:1")))


def _name(value: Any) -> str | None:
    """An SDK enum's (or an unknown string's) name."""
    return None if value is None else str(getattr(value, "value", value))


def drawn_from(response: genai_types.GenerateContentResponse) -> DrawnImage:
    """The answer's image; ImageRefused for a safety block, ImageFailed when none came."""
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        raise ImageRefused(_name(feedback.block_reason) or "blocked")
    candidates = response.candidates or []
    if not candidates:
        raise ImageFailed("no_image", "the answer held no candidate")
    candidate = candidates[0]
    ending = _name(candidate.finish_reason)
    if ending in SAFETY_ENDINGS:
        raise ImageRefused(ending)
    parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
    images = [part.inline_data for part in parts
              if part.inline_data is not None and part.inline_data.data and not part.thought
              and (part.inline_data.mime_type or "").startswith("image/")]
    if not images:
        raise ImageFailed("no_image", f"the answer held no image (finish reason {ending})")
    return DrawnImage(images[-1].data or b"", images[-1].mime_type or "image/png")


def failure_of(exc: Exception) -> ImageFailed:
    """The SDK's error as ImageFailed naming its kind (Gemini's bad key is a 400
    INVALID_ARGUMENT whose message names the key)."""
    if isinstance(exc, genai_errors.APIError):
        code = int(exc.code or 0)
        if code == 400 and "api key" in (exc.message or "").lower():
            return ImageFailed("key", f"status {code} ({exc.status})")
        return ImageFailed(KINDS.get(code, "failed"), f"status {code} ({exc.status})")
    if isinstance(exc, RequestRefused):
        return ImageFailed("refused", str(exc))
    return ImageFailed("unreachable", type(exc).__name__)


class GeminiImages:
    """One Gemini image model with one key; `base_url` only where the operator set one."""

    def __init__(self, *, model: str, api_key: str, base_url: str | None = None) -> None:
        self.model = model
        self._key = api_key
        self._base_url = base_url

    async def draw(self, ask: ImageAsk) -> DrawnImage:
        """The image for `ask`; ImageRefused or ImageFailed otherwise."""
        transport = SharedGeminiTransport.new()
        options = genai_types.HttpOptions(
            base_url=self._base_url, api_version=API_VERSION, timeout=DRAW_TIMEOUT_MS,
            retry_options=genai_types.HttpRetryOptions(attempts=1),
            httpx_client=transport.sync_client, httpx_async_client=transport.async_client,
            async_client_args={"ssl": transport.ssl_context})
        try:
            client = genai.Client(api_key=self._key, http_options=options)
            response = await client.aio.models.generate_content(
                model=self.model, contents=[genai_types.Content(role="user", parts=request_parts(ask))],
                config=request_config(ask))
        except (genai_errors.APIError, httpx2.HTTPError, RequestRefused, OSError) as exc:
            raise failure_of(exc) from None
        finally:
            await transport.aclose()
        return drawn_from(response)
