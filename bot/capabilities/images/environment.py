"""The operator's image route and bounds (environment variables), read like
`DEFAULT_TEXT_*`: `Settings` inherits `ImageEnvironment`, and `python -m bot` refuses to
start on `image_route_problem`'s one line."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from bot.route_problem import EnvironmentRoute

IMAGE_PROVIDERS = ("openai", "custom", "google", "openrouter")  # the routes providers/images/ speaks so far


class ImageEnvironment(BaseModel):
    """`DEFAULT_IMAGE_*`: the route `/imagine` and the `draw_image` tool use (unset: no
    images); `IMAGES_PER_DAY`: what one member may draw per UTC day on it; `IMAGE_PRICE`:
    what one image on it costs, shown in `/personal usage` and a server's `/usage` (an image
    on a server's own route is priced by its `/model image price`)."""

    DEFAULT_IMAGE_PROVIDER: str | None = None
    DEFAULT_IMAGE_MODEL: str | None = None
    DEFAULT_IMAGE_BASE_URL: str | None = None
    DEFAULT_IMAGE_API_KEYS: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    IMAGES_PER_DAY: int = Field(default=10, ge=0, le=10_000)
    IMAGE_PRICE: float | None = Field(default=None, ge=0, le=1000)  # USD per image, for usage

    @field_validator("DEFAULT_IMAGE_PROVIDER", "DEFAULT_IMAGE_MODEL", "DEFAULT_IMAGE_BASE_URL", "IMAGE_PRICE",
                     mode="before")
    @classmethod
    def _blank_image_route(cls, value: object) -> object:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("DEFAULT_IMAGE_PROVIDER")
    @classmethod
    def _image_provider(cls, value: str | None) -> str | None:
        if value is not None and value.lower() not in IMAGE_PROVIDERS:
            raise ValueError(f"unknown image provider {value[:40]!r}; use one of {', '.join(IMAGE_PROVIDERS)}")
        return value.lower() if value else value

    @field_validator("DEFAULT_IMAGE_BASE_URL")
    @classmethod
    def _image_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if value else value

    @field_validator("DEFAULT_IMAGE_API_KEYS", mode="before")
    @classmethod
    def _image_keys(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    def default_image_api_keys(self) -> list[str]:
        return [key.get_secret_value() for key in self.DEFAULT_IMAGE_API_KEYS]


def image_route_problem(settings: ImageEnvironment) -> str | None:
    """The one line naming what a partly set image route lacks, or None when it is
    complete or not set at all (the text route's rule: `bot.route_problem`)."""
    return EnvironmentRoute("IMAGE", "the image route", settings.DEFAULT_IMAGE_PROVIDER, settings.DEFAULT_IMAGE_MODEL,
                            settings.DEFAULT_IMAGE_BASE_URL, bool(settings.DEFAULT_IMAGE_API_KEYS)).problem()
