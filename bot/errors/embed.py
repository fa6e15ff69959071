"""The error embed as a neutral `EmbedSpec`, in the reader's locale, inside Discord's limits.

`error_embed(error, scene)` is the one entry point a turn calls; the spec goes through
the stream's `MessageSink.send_embed`, and `bot.edge.embeds.embed_from_spec` turns the
same spec into a `discord.Embed`, so the layout lives in one place.
"""

from __future__ import annotations

from bot.edge.command_names import for_discord
from bot.edge.limits import (
    EMBED_DESCRIPTION_LIMIT,
    EMBED_FIELD_COUNT_LIMIT,
    EMBED_FIELD_NAME_LIMIT,
    EMBED_FIELD_VALUE_LIMIT,
    EMBED_TITLE_LIMIT,
    EMBED_TOTAL_LIMIT,
)
from bot.errors.presentation import (
    SEPARATOR,
    ErrorPresentation,
    ErrorScene,
    resolve_presentation,
    trim,
)
from bot.errors.tables import KIND_COLORS, RED
from providers.i18n import t
from providers.types import ProviderError
from stream.sink import EmbedSpec

TIPS_FIELD_KEY = "genai.embed.tips_field"
CONTINUATION_NAME = "\u200b"  # Discord needs a non-empty field name; this one shows nothing.
BULLET = "• "


def kind_color(kind: str) -> int:
    return KIND_COLORS.get(kind, RED)


def tip_fields(tips: list[str], name: str) -> list[tuple[str, str]]:
    """Bulleted tips packed into as few fields as fit a field value, never splitting a tip."""
    fields: list[tuple[str, str]] = []
    current = ""
    for tip in tips:
        line = trim(BULLET + tip, EMBED_FIELD_VALUE_LIMIT)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= EMBED_FIELD_VALUE_LIMIT:
            current = candidate
            continue
        fields.append((name if not fields else CONTINUATION_NAME, current))
        current = line
    if current:
        fields.append((name if not fields else CONTINUATION_NAME, current))
    return fields[:EMBED_FIELD_COUNT_LIMIT]


def embed_size(spec: EmbedSpec) -> int:
    """Characters Discord counts against an embed's total."""
    fields = sum(len(name) + len(value) for name, value in spec.fields)
    return len(spec.title) + len(spec.description) + fields + len(spec.footer or "")


def build_error_embed_spec(presentation: ErrorPresentation, locale: str | None) -> EmbedSpec:
    """Title, headline + detail, tips as fields and colour by kind, all in `locale`."""
    title = trim(t(presentation.title_key, locale), EMBED_TITLE_LIMIT)
    parts = [p for p in (presentation.headline, presentation.detail) if p]
    description = trim(SEPARATOR.join(parts), EMBED_DESCRIPTION_LIMIT)
    name = trim(t(TIPS_FIELD_KEY, locale), EMBED_FIELD_NAME_LIMIT)
    fields = tip_fields([for_discord(t(key, locale), locale) for key in presentation.tip_keys], name)
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


def error_embed(error: ProviderError, scene: ErrorScene) -> EmbedSpec:
    """The embed a failed turn shows: `error` presented for `scene`, in the scene's locale."""
    return build_error_embed_spec(resolve_presentation(error, scene), scene.locale)
