"""What an error embed says: title, headline, the provider's own words and the tips.

Everything is a lookup on the error's kind (decided once, when the error was
classified); the scene says who reads it and whose key failed. Pure: no I/O beyond the
cached catalog lookup of the headline, no clock, no state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from bot.edge.limits import EMBED_DESCRIPTION_LIMIT
from bot.errors.tables import (
    DISABLE_PERSONAL_OVERRIDE,
    RATE_LIMIT_ALL_KEYS_TITLE,
    SUPPORTED_MODELS_KEY,
    TIPS,
    TITLE_KEYS,
    TipContext,
    scoped_key,
)
from bot.errors.terminal import silence_headline, terminal_tip_keys
from providers.error_description import describe_error
from providers.i18n import t
from providers.identity import Provider
from providers.redaction import redact_secrets
from providers.types import FailureKind, ProviderError

CredentialSource = Literal["server", "personal"]
CREDENTIAL_SOURCES = ("server", "personal")
# Who reads the error: a channel on Discord, or the operator in a terminal (`bot ask`, `bot check`).
Audience = Literal["discord", "terminal"]
# How much of the description the provider's own words may take, so the headline and
# the tip fields still fit one embed's total.
DETAIL_BUDGET = EMBED_DESCRIPTION_LIMIT // 4
SUPPORTED_MODELS_SHOWN = 25
SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class ErrorScene:
    """Who reads the error and under which credentials the turn ran.

    `credential_source` is the turn's resolved route ("server", "personal"; None reads
    as the server form), never guessed from provider or model names. `fallback_chain`
    is the server's chain of models after the failed one. `known_secrets` are the keys
    the turn held; they are redacted from anything shown and never printed by repr.
    `audience` "terminal" is the operator at `bot ask` or `bot check`: the tips name
    `.env` settings instead of commands (`bot.errors.terminal`), and the provider's
    words and `address` (host and path the failed attempt went to) are shown, since
    that reader set the address.
    """

    locale: str | None = None
    credential_source: CredentialSource | None = None
    fallback_chain: tuple[str, ...] = ()
    rotation_keys_exhausted: bool = False
    known_secrets: tuple[str, ...] = field(default=(), repr=False)
    audience: Audience = "discord"
    address: str | None = None

    def __post_init__(self) -> None:
        if self.credential_source is not None and self.credential_source not in CREDENTIAL_SOURCES:
            raise ValueError(
                f"credential_source must be 'server', 'personal' or None, not {self.credential_source!r}"
            )
        object.__setattr__(self, "fallback_chain", tuple(self.fallback_chain))
        object.__setattr__(self, "known_secrets", tuple(self.known_secrets))

    @property
    def personal(self) -> bool:
        return self.credential_source == "personal"

    @property
    def terminal(self) -> bool:
        return self.audience == "terminal"


@dataclass(slots=True)
class ErrorPresentation:
    """Everything the error embed shows; `kind` picks the colour."""

    title_key: str
    headline: str
    detail: str
    tip_keys: list[str] = field(default_factory=list)
    kind: FailureKind = "request_refused"


def trim(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary near the end when there is one."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit - 80:
        cut = cut[:space]
    return cut.rstrip() + "…"


_WS = re.compile(r"\s+")


def _normalized(text: str) -> str:
    return _WS.sub(" ", text).strip().rstrip(".!?。！？ ").casefold()


def supported_models(details: object) -> list[str]:
    """The provider's list of supported model ids, when the adapter kept one in `details`."""
    if isinstance(details, Mapping):
        for key in ("supported_models", "available_models", "models", "supported", "available"):
            value = details.get(key)
            if isinstance(value, (list, tuple)):
                return [str(m) for m in value if isinstance(m, str) and m.strip()]
    return []


def _raw_detail(error: ProviderError, locale: str | None) -> str:
    text = (error.message or "").strip()
    models = supported_models(error.details) if error.kind == "model_error" else []
    if models:
        shown = ", ".join(models[:SUPPORTED_MODELS_SHOWN])
        if len(models) > SUPPORTED_MODELS_SHOWN:
            shown += ", …"
        listing = t(SUPPORTED_MODELS_KEY, locale, models=shown)
        text = f"{text}\n{listing}" if text else listing
    return text


def build_detail(error: ProviderError, headline: str, locale: str | None,
                 known_secrets: Iterable[str]) -> str:
    """The provider's own words: redacted first (so a trim cannot leave half a key),
    dropped when the headline already says them, then trimmed to the budget."""
    detail = redact_secrets(_raw_detail(error, locale), known_secrets)
    normalized = _normalized(detail)
    if not normalized or normalized in _normalized(headline):
        return ""
    room = EMBED_DESCRIPTION_LIMIT - len(headline) - len(SEPARATOR)
    return trim(detail, max(0, min(DETAIL_BUDGET, room)))


def tip_keys(error: ProviderError, kind: FailureKind, scene: ErrorScene) -> list[str]:
    """The kind's tips that apply, in the credential scope's form; a personal failure ends
    with how to hand the turn back to the server. The terminal's are the `.env` forms."""
    if scene.terminal:
        return terminal_tip_keys(error, kind)
    ctx = TipContext(error=error, fallback_chain=scene.fallback_chain)
    keys: list[str] = []
    for tip in TIPS[kind]:
        if scene.personal and tip.server_only or not tip.when(ctx):
            continue
        key = scoped_key(tip.key, scene.personal and tip.scoped)
        if key not in keys:
            keys.append(key)
    if scene.personal:
        keys.append(DISABLE_PERSONAL_OVERRIDE)
    return keys


def title_key(kind: FailureKind, scene: ErrorScene) -> str:
    # A rotation pool is server-scoped: a personal key has no pool to exhaust.
    if kind == "rate_limit" and scene.rotation_keys_exhausted and not scene.personal:
        return RATE_LIMIT_ALL_KEYS_TITLE
    return TITLE_KEYS[kind]


def answered_at(error: ProviderError) -> str | None:
    """Where a "not found" came from (host and path), for those who set the address: the
    operator's log, a check's row, the managers' thought log; never the channel's embed."""
    address = (error.facts or {}).get("address") if error.kind == "not_found" else None
    return str(address) if address else None


def public_detail(error: ProviderError) -> bool:
    """Whether the provider's own words may be shown in the channel. A custom endpoint is
    whatever address a manager typed: its error body may be an internal service's reply
    (an intranet page, a metadata document), so it goes only to the managers' thought-log
    channel (`bot.question.thought_log.post_error_detail`), never into the public embed."""
    return error.provider != Provider.CUSTOM


def private_detail(error: ProviderError, locale: str | None, known_secrets: Iterable[str]) -> str | None:
    """The words `public_detail` keeps out of the channel, redacted and trimmed; None when
    there are none to keep back."""
    if public_detail(error):
        return None
    detail = build_detail(error, "", locale, known_secrets)
    address = answered_at(error)
    if address:
        detail = "\n".join(part for part in (t("genai.detail.answered_at", locale, address=address), detail) if part)
    return detail or None


def terminal_detail(error: ProviderError, headline: str, scene: ErrorScene) -> str:
    """The operator set the address: where a "not found" answered, and the provider's own
    words, a custom endpoint's too."""
    address = answered_at(error)
    where = t("genai.detail.answered_at", scene.locale, address=address) if address else ""
    words = build_detail(error, headline, scene.locale, scene.known_secrets)
    return "\n".join(part for part in (where, words) if part)


def headline_and_detail(error: ProviderError, scene: ErrorScene) -> tuple[str, str]:
    """What failed in one sentence, and the provider's words where this reader may see them."""
    silence = silence_headline(error, scene.address, scene.locale) if scene.terminal else None
    if silence is not None:  # where it waited and how long says it all: no English detail after it
        return redact_secrets(silence, scene.known_secrets), ""
    headline = redact_secrets(describe_error(error, scene.locale), scene.known_secrets)
    if scene.terminal:
        return headline, terminal_detail(error, headline, scene)
    detail = build_detail(error, headline, scene.locale, scene.known_secrets) if public_detail(error) else ""
    return headline, detail


def resolve_presentation(error: ProviderError, scene: ErrorScene) -> ErrorPresentation:
    """Title, headline, detail and tips of a failed turn, for `scene`."""
    kind: FailureKind = error.kind or "request_refused"
    headline, detail = headline_and_detail(error, scene)
    return ErrorPresentation(
        title_key=title_key(kind, scene),
        headline=headline,
        detail=detail,
        tip_keys=tip_keys(error, kind, scene),
        kind=kind,
    )
