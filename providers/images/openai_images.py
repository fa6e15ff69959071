"""OpenAI's Images API through the official SDK: `images.generate` for a prompt,
`images.edit` when the ask carries an image to change. One image per request (`n=1`),
answered as base64 JSON. OpenAI-compatible servers (`custom`) speak the same API.

GPT Image models always answer base64 and refuse `response_format`; DALL·E and most
compatible servers answer a URL unless asked for `b64_json`, so it is sent to them only.
A refusal by the safety system is a 400 whose error code is `moderation_blocked` (GPT
Image) or `content_policy_violation` (DALL·E), or, from older servers, a message naming
the safety system: `ImageRefused`. Any other failure is `ImageFailed` with its kind.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import httpx2
import openai

from providers.endpoint_check import EndpointPolicy
from providers.error_body import error_fields
from providers.http_transport import sdk_http_client
from providers.identity import Provider
from providers.images.ask import DrawnImage, ImageAsk, ImageFailed, ImageRefused
from providers.openai_compat.request import DEFAULT_BASE_URLS
from providers.safe_transport import RequestRefused

SAFETY_CODES = frozenset({"moderation_blocked", "content_policy_violation"})
DRAW_TIMEOUT = httpx2.Timeout(180.0, connect=10.0)  # an image takes up to a minute or two
FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
# Status codes whose cause the member's line can name; anything else is "failed".
KINDS = {401: "key", 403: "key", 404: "model", 429: "busy"}


def always_base64(model: str) -> bool:
    """GPT Image models answer base64 only and refuse `response_format`."""
    return model.lower().startswith(("gpt-image", "chatgpt-image"))


def request_arguments(model: str, ask: ImageAsk) -> dict[str, Any]:
    """The SDK call's arguments for `ask` (without the image to change)."""
    arguments: dict[str, Any] = {"model": model, "prompt": ask.prompt, "n": 1, "size": ask.size}
    if not always_base64(model):
        arguments["response_format"] = "b64_json"
    return arguments


def drawn_from(response: Any) -> DrawnImage:
    """The first image of an `ImagesResponse`, or ImageFailed when it holds none."""
    items = getattr(response, "data", None) or []
    encoded = getattr(items[0], "b64_json", None) if items else None
    if not encoded:
        raise ImageFailed("no_image", "the answer held no base64 image")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ImageFailed("no_image", "the answer's image was not base64") from None
    return DrawnImage(data, FORMATS.get(getattr(response, "output_format", None) or "png", "image/png"))


def failure_of(exc: Exception) -> Exception:
    """The SDK's error as ImageRefused (safety) or ImageFailed (its kind); the detail holds
    the status and the provider's code, never the request's key."""
    if isinstance(exc, openai.APIStatusError):
        message, code, _type, _details = error_fields(exc.body)
        code = code if code is not None else getattr(exc, "code", None)
        if exc.status_code == 400 and (code in SAFETY_CODES or "safety system" in (message or "").lower()):
            return ImageRefused(str(code or "safety"))
        return ImageFailed(KINDS.get(exc.status_code, "failed"), f"status {exc.status_code} ({code or 'no code'})")
    if isinstance(exc, openai.APIConnectionError):  # a timeout is one too
        return ImageFailed("unreachable", type(exc).__name__)
    if isinstance(exc, RequestRefused):  # a redirect, or an address the policy refuses
        return ImageFailed("refused", str(exc))
    return ImageFailed("failed", type(exc).__name__)


class OpenAIImages:
    """One image model on OpenAI or an OpenAI-compatible endpoint, with one key."""

    def __init__(self, provider: Provider, *, model: str, api_key: str, base_url: str | None = None,
                 policy: EndpointPolicy | None = None) -> None:
        if base_url is None and provider is Provider.CUSTOM:
            raise ValueError("the custom provider needs a base_url (the server root plus /v1)")
        self.model = model
        self.base_url = base_url or DEFAULT_BASE_URLS[Provider.OPENAI]
        self._key = api_key
        # Only a custom endpoint has its connections checked, as the text adapters do.
        self._policy = (policy or EndpointPolicy()) if provider is Provider.CUSTOM else None

    def _client(self) -> openai.AsyncOpenAI:
        http_client = sdk_http_client(openai.DefaultAsyncHttpxClient, policy=self._policy)
        return openai.AsyncOpenAI(api_key=self._key or "unsent", base_url=self.base_url, max_retries=0,
                                  timeout=DRAW_TIMEOUT, http_client=http_client)

    async def draw(self, ask: ImageAsk) -> DrawnImage:
        """The image for `ask`; ImageRefused or ImageFailed otherwise."""
        arguments = request_arguments(self.model, ask)
        auth = {"extra_headers": {"Authorization": f"Bearer {self._key}" if self._key else openai.Omit()}}
        async with self._client() as client:
            try:
                if ask.source is None:
                    response = await client.images.generate(**arguments, **auth)
                else:
                    image = (ask.source_name, ask.source, ask.source_mime)
                    response = await client.images.edit(image=image, **arguments, **auth)
            except (openai.OpenAIError, RequestRefused) as exc:
                raise failure_of(exc) from None
        return drawn_from(response)
