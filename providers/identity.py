"""Which provider a route speaks to: one typed identity instead of strings.

A provider name compared as a string drifts silently: one such comparison once asked
for "gemini" where every route said "google", and no Gemini route ever searched. The
`Provider` enum is the one vocabulary. It is a `StrEnum`, so a stored or typed name
("google") becomes a member once, at the edge (`provider_of`), and a member still
writes itself as its name in the database, logs and metrics.
"""

from __future__ import annotations

from enum import StrEnum


class Provider(StrEnum):
    """The providers the bot talks to; `CUSTOM` is any OpenAI-compatible server."""

    GOOGLE = "google"
    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    OPENROUTER = "openrouter"
    DEEPSEEK = "deepseek"
    ZAI = "zai"
    CUSTOM = "custom"


KNOWN_PROVIDERS: tuple[str, ...] = tuple(member.value for member in Provider)


def provider_of(value: str | Provider) -> Provider:
    """The member for a name (surrounding space and case ignored); ValueError naming the
    known providers otherwise."""
    if isinstance(value, Provider):
        return value
    name = str(value).strip().lower()
    try:
        return Provider(name)
    except ValueError:
        raise ValueError(
            f"unknown provider {str(value)[:40]!r}; known providers: {', '.join(KNOWN_PROVIDERS)}"
        ) from None
