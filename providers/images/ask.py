"""What an image route is asked and what it answers, whatever the provider."""

from __future__ import annotations

from dataclasses import dataclass

# The bot's sizes as the aspect ratios Gemini (and OpenRouter's `image_config`) take.
ASPECT_RATIOS = {"1024x1024": "1:1", "1536x1024": "3:2", "1024x1536": "2:3"}
# Gemini's safety endings (`finishReason`, OpenRouter's `native_finish_reason`) and block reasons.
SAFETY_ENDINGS = frozenset({"SAFETY", "IMAGE_SAFETY", "PROHIBITED_CONTENT", "IMAGE_PROHIBITED_CONTENT",
                            "BLOCKLIST", "SPII", "RECITATION", "IMAGE_RECITATION"})


@dataclass(frozen=True)
class ImageAsk:
    """One image to draw: the prompt, its size ("1024x1024"), and an image to change
    (`source`: its bytes, `source_name` its file name with the type's extension) or none."""

    prompt: str
    size: str
    source: bytes | None = None
    source_name: str = "image.png"
    source_mime: str = "image/png"


@dataclass(frozen=True)
class DrawnImage:
    """The drawn image's bytes and type (`mime`, e.g. image/png)."""

    data: bytes
    mime: str

    @property
    def extension(self) -> str:
        """The file name extension for `mime` (png unless the provider said otherwise)."""
        return {"image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}.get(self.mime, "png")


class ImageRefused(Exception):
    """The provider's safety system refused the prompt or the image: a note for the
    member, not an error (retrying the same prompt is refused again)."""


class ImageFailed(Exception):
    """The route could not draw (a bad key, an unknown model, the service down, an answer
    without an image); `kind` names which for the member's line, `str()` is for the log and
    never holds a key."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
