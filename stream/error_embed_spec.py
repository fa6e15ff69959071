"""The error embed as a neutral `EmbedSpec`, in the reader's locale, inside Discord's limits.

The stream layer sends it through `MessageSink.send_embed` without discord.py; the bot
turns the same spec into a `discord.Embed`, so the layout lives in one place.
Limits (Discord): title 256, description 4096, field name 256, field value 1024,
25 fields, 6000 characters in total.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from providers.i18n import t
from providers.types import ProviderError
from stream.error_presentation import (
    ErrorPresentation,
    resolve_provider_error_presentation,
    trim,
)
from stream.sink import EmbedSpec

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FIELD_COUNT_LIMIT = 25
EMBED_TOTAL_LIMIT = 6000
TIPS_FIELD_KEY = "genai.embed.tips_field"
CONTINUATION_NAME = "\u200b"  # Discord needs a non-empty field name; this one shows nothing.
BULLET = "• "

RED, ORANGE, AMBER, PURPLE, BLUE, DARK_RED = 0xE74C3C, 0xE67E22, 0xF39C12, 0x9B59B6, 0x3498DB, 0x992D22
# By branch: red for a broken setup, amber for what passes on its own, purple for billing.
KIND_COLORS: dict[str, int] = {
    "model_error": ORANGE,
    "balance_exhausted": PURPLE,
    "credit_limit": PURPLE,
    "context_length": BLUE,
    "rate_limit": AMBER,
    "content_blocked": DARK_RED,
    "timeout": AMBER,
    "provider_overloaded": AMBER,
    "api_error": RED,
}


def kind_color(kind: str) -> int:
    return KIND_COLORS.get(kind, RED)


def tip_fields(tips: list[str], name: str) -> list[tuple[str, str]]:
    """Bulleted tips packed into as few fields as fit 1024 characters, never splitting a tip."""
    fields: list[tuple[str, str]] = []
    current = ""
    for tip in tips:
        line = trim(BULLET + tip, FIELD_VALUE_LIMIT)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= FIELD_VALUE_LIMIT:
            current = candidate
            continue
        fields.append((name if not fields else CONTINUATION_NAME, current))
        current = line
    if current:
        fields.append((name if not fields else CONTINUATION_NAME, current))
    return fields[:FIELD_COUNT_LIMIT]


def embed_size(spec: EmbedSpec) -> int:
    """Characters Discord counts against the 6000 total."""
    fields = sum(len(name) + len(value) for name, value in spec.fields)
    return len(spec.title) + len(spec.description) + fields + len(spec.footer or "")


def build_error_embed_spec(presentation: ErrorPresentation, locale: str | None) -> EmbedSpec:
    """Title, headline + detail, tips as fields and colour by kind, all in `locale`."""
    title = trim(t(presentation.title_key, locale), TITLE_LIMIT)
    parts = [p for p in (presentation.headline, presentation.detail) if p]
    description = trim("\n\n".join(parts), DESCRIPTION_LIMIT)
    name = trim(t(TIPS_FIELD_KEY, locale), FIELD_NAME_LIMIT)
    fields = tip_fields([t(key, locale) for key in presentation.tip_keys], name)
    spec = EmbedSpec(
        title=title, description=description, color=kind_color(presentation.kind), fields=fields
    )
    # Only absurd translations get here: give up detail text first, then trailing tips.
    excess = embed_size(spec) - EMBED_TOTAL_LIMIT
    if excess > 0:
        spec.description = trim(spec.description, max(0, len(spec.description) - excess))
    while embed_size(spec) > EMBED_TOTAL_LIMIT and spec.fields:
        spec.fields.pop()
    return spec


def error_embed_renderer(
    *,
    locale: str | None,
    credential_source: str | None = None,
    fallback_chain: Sequence[str] = (),
    rotation_keys_exhausted: bool = False,
    known_secrets: Iterable[str] = (),
) -> Callable[[ProviderError], EmbedSpec]:
    """What the turn hands the orchestrator (`render_error=`): error -> localized embed spec,
    with the turn's credential scope, fallback chain and held keys already bound."""
    secrets = tuple(known_secrets)
    chain = tuple(fallback_chain)

    def render(error: ProviderError) -> EmbedSpec:
        presentation = resolve_provider_error_presentation(
            error, credential_source=credential_source, fallback_chain=chain,
            rotation_keys_exhausted=rotation_keys_exhausted, locale=locale, known_secrets=secrets,
        )
        return build_error_embed_spec(presentation, locale)

    return render
