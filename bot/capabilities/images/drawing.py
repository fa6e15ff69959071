"""Drawing one image on an image route: the bounds every ask is held to (sizes,
prompt length, the image to change), the key rotation, and the outcome as the member's
line: an image, a safety note, or a failure naming its cause. Keys never reach a log."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import Protocol

from bot.capabilities.images.environment import ImageEnvironment
from providers.endpoint_check import EndpointPolicy
from providers.identity import Provider
from providers.images import DrawnImage, ImageAsk, ImageFailed, ImageRefused
from providers.log_safe import loggable

log = logging.getLogger(__name__)

SIZES = ("1024x1024", "1536x1024", "1024x1536")  # square, landscape, portrait: every GPT Image model's
DEFAULT_SIZE = SIZES[0]
MAX_PROMPT = 1000  # characters; the provider takes more, a Discord line shows less
MAX_SOURCE_BYTES = 20 * 1024 * 1024  # an image to change, as OpenAI's edits take at most
# Why no image came, by ImageFailed's kind, as the member reads it.
FAILURE_LINES = {
    "key": "chat.images.failed_key", "model": "chat.images.failed_model", "busy": "chat.images.failed_busy",
    "unreachable": "chat.images.failed_unreachable", "no_image": "chat.images.failed_no_image",
    "refused": "chat.images.failed_refused",
}
SOURCE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}


class ImageRoute(Protocol):
    async def draw(self, ask: ImageAsk) -> DrawnImage:
        """The image, or ImageRefused / ImageFailed."""


def prompt_refusal(prompt: str) -> tuple[str, dict[str, int]] | None:
    """The catalog key (and its parameters) refusing `prompt`, or None when it may be drawn."""
    if not prompt.strip():
        return "chat.images.empty_prompt", {}
    if len(prompt) > MAX_PROMPT:
        return "chat.images.long_prompt", {"limit": MAX_PROMPT, "count": len(prompt)}
    return None


@dataclass(frozen=True)
class Drawing:
    """What one ask came to: the image, or the catalog key of the member's line
    (`note`: a safety refusal, said as a note rather than an error)."""

    image: DrawnImage | None = None
    line: str | None = None
    note: bool = False
    params: dict[str, int] = field(default_factory=dict)


class Painter:
    """One image route (the operator's `DEFAULT_IMAGE_*`, or a server's own), its keys
    taken in turn."""

    def __init__(self, provider: Provider, model: str, base_url: str | None, keys: list[str],
                 allow_private: bool = True, source: str = "operator") -> None:
        self.provider, self.model, self.base_url = provider, model, base_url
        self.source = source  # whose keys draw: "operator" (DEFAULT_IMAGE_*) or "server"
        self._keys = itertools.cycle(keys or [""])
        # The operator wrote its address (as for DEFAULT_TEXT_BASE_URL: private allowed); a
        # server's custom address is held to ALLOW_PRIVATE_ENDPOINTS again at each request.
        self._policy = EndpointPolicy(allow_private=allow_private)

    @classmethod
    def of(cls, settings: ImageEnvironment) -> Painter | None:
        """The painter for the operator's route, or None when it names none."""
        if not (settings.DEFAULT_IMAGE_PROVIDER and settings.DEFAULT_IMAGE_MODEL):
            return None
        return cls(Provider(settings.DEFAULT_IMAGE_PROVIDER), settings.DEFAULT_IMAGE_MODEL,
                   settings.DEFAULT_IMAGE_BASE_URL, settings.default_image_api_keys())

    @property
    def route(self) -> tuple[str, str, str]:
        """(provider, model, whose keys) as the server's image usage counts it."""
        return self.provider.value, self.model, self.source

    def _route(self, key: str) -> ImageRoute:
        """The provider's route with `key`. The SDKs are imported at the first image, not
        at start-up (tests/test_idle_imports.py)."""
        if self.provider is Provider.GOOGLE:
            from providers.images.gemini_images import GeminiImages

            return GeminiImages(model=self.model, api_key=key, base_url=self.base_url)
        if self.provider is Provider.OPENROUTER:
            from providers.images.openrouter_images import OpenRouterImages

            return OpenRouterImages(model=self.model, api_key=key, base_url=self.base_url)
        from providers.images.openai_images import OpenAIImages

        return OpenAIImages(self.provider, model=self.model, api_key=key, base_url=self.base_url, policy=self._policy)

    async def draw(self, ask: ImageAsk) -> Drawing:
        """Draw `ask` with the next key; a refusal or failure is the member's line."""
        route = self._route(next(self._keys))
        try:
            return Drawing(image=await route.draw(ask))
        except ImageRefused as refused:
            log.info("the image route's safety system refused a prompt (%s)", loggable(str(refused)))
            return Drawing(line="chat.images.refused", note=True)
        except ImageFailed as failed:
            log.warning("the image route %s/%s failed: %s", self.provider.value, loggable(self.model),
                        loggable(str(failed)))
            return Drawing(line=FAILURE_LINES.get(failed.kind, "chat.images.failed_failed"))
