"""The operator's voice settings: the transcription route (DEFAULT_TRANSCRIBE_*, read like
DEFAULT_TEXT_*) and the longest voice message the bot takes.

A mixin `bot.settings.Settings` inherits, so every mistake stops start-up in the one line
`load_settings` makes of a validation error, naming the setting: the fields validate in
this order, each seeing the ones before it (`info.data`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import NoDecode

TRANSCRIBE_PROVIDERS = ("openai", "custom")  # custom: any OpenAI-compatible audio/transcriptions server


class VoiceEnvironment(BaseModel):
    """DEFAULT_TRANSCRIBE_PROVIDER, _MODEL, _BASE_URL, _API_KEYS and VOICE_MAX_SECONDS."""

    DEFAULT_TRANSCRIBE_PROVIDER: str | None = None
    DEFAULT_TRANSCRIBE_MODEL: str | None = Field(default=None, validate_default=True)
    DEFAULT_TRANSCRIBE_BASE_URL: str | None = Field(default=None, validate_default=True)
    DEFAULT_TRANSCRIBE_API_KEYS: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list,
                                                                             validate_default=True)
    # The longest voice message heard or transcribed; a longer one gets a note and is not sent.
    VOICE_MAX_SECONDS: int = Field(default=300, ge=5, le=1200)

    @field_validator("DEFAULT_TRANSCRIBE_PROVIDER", "DEFAULT_TRANSCRIBE_MODEL", "DEFAULT_TRANSCRIBE_BASE_URL",
                     mode="before")
    @classmethod
    def _blank_transcribe(cls, value: object) -> object:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("DEFAULT_TRANSCRIBE_PROVIDER")
    @classmethod
    def _transcribe_provider(cls, value: str | None) -> str | None:
        if value is not None and value.lower() not in TRANSCRIBE_PROVIDERS:
            raise ValueError(f"unknown transcription provider {value!r}; use one of {', '.join(TRANSCRIBE_PROVIDERS)}")
        return value.lower() if value is not None else None

    @field_validator("DEFAULT_TRANSCRIBE_MODEL")
    @classmethod
    def _transcribe_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        provider = info.data.get("DEFAULT_TRANSCRIBE_PROVIDER")
        if provider and not value:
            raise ValueError(f"DEFAULT_TRANSCRIBE_PROVIDER={provider} needs the model to transcribe with "
                             "(e.g. whisper-1 or gpt-4o-mini-transcribe)")
        if value and not provider and "DEFAULT_TRANSCRIBE_PROVIDER" in info.data:
            raise ValueError("needs DEFAULT_TRANSCRIBE_PROVIDER (openai or custom)")
        return value

    @field_validator("DEFAULT_TRANSCRIBE_BASE_URL")
    @classmethod
    def _transcribe_base_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        if value is None and info.data.get("DEFAULT_TRANSCRIBE_PROVIDER") == "custom":
            raise ValueError("DEFAULT_TRANSCRIBE_PROVIDER=custom needs the server's address "
                             "(e.g. http://127.0.0.1:8000/v1)")
        return value.rstrip("/") if value else value

    @field_validator("DEFAULT_TRANSCRIBE_API_KEYS", mode="before")
    @classmethod
    def _transcribe_keys_csv(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("DEFAULT_TRANSCRIBE_API_KEYS")
    @classmethod
    def _transcribe_keys(cls, value: list[SecretStr], info: ValidationInfo) -> list[SecretStr]:
        if info.data.get("DEFAULT_TRANSCRIBE_PROVIDER") == "openai" and not value:
            raise ValueError("DEFAULT_TRANSCRIBE_PROVIDER=openai needs at least one key "
                             "(only a custom server may go without)")
        return value

    def transcribe_keys(self) -> list[str]:
        return [key.get_secret_value() for key in self.DEFAULT_TRANSCRIBE_API_KEYS]
