"""Remove secrets from provider text before it reaches a log, a metric or an embed.

Providers echo keys back ("Incorrect API key provided: sk-...") and gateways relay
request dumps, so both the keys the caller holds and anything credential-shaped are
replaced. The one redaction every layer uses: classification redacts the message it
keeps, and the bot redacts again with the turn's held keys before showing anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"
# A held "key" shorter than this is not a real credential; replacing it would shred prose.
MIN_KNOWN_SECRET = 6
_TOKEN = r"[A-Za-z0-9._~+/=-]"
_SECRET_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_*-]{8,}"),  # sk-, sk-proj-, sk-ant-api03-, sk-or-v1-, masked sk-...****
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),  # Google API keys
    re.compile(r"\b(?:gsk|xai|hf|ghp|gho|ghs|xox[abp])[_-][A-Za-z0-9_-]{16,}"),
    re.compile(r"\b[0-9a-fA-F]{32}\.[A-Za-z0-9]{16}\b"),  # Z.ai: 32 hex, a dot, 16 alnum
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"\bya29\.[A-Za-z0-9_-]{16,}"),  # Google OAuth access token
)
_BEARER = re.compile(rf"\b(Bearer|Basic|Token)(\s+){_TOKEN}{{8,}}", re.IGNORECASE)
# key=..., "api_key": "...", x-api-key: ... : the value is secret whatever it looks like.
_ASSIGNED = re.compile(
    r"(\b(?:x-)?(?:api[_-]?key|key|access[_-]?token|token|secret|password|authorization|auth)"
    rf"[\"']?\s*[:=]\s*[\"']?)({_TOKEN}{{12,}})",
    re.IGNORECASE,
)


def redact_secrets(text: str, known_secrets: Iterable[str] = ()) -> str:
    """Every held key and every credential-shaped token in `text` replaced by REDACTED."""
    if not text:
        return text
    # Longest first, so a held key containing another held key is removed whole.
    for secret in sorted({s.strip() for s in known_secrets if s}, key=len, reverse=True):
        if len(secret) >= MIN_KNOWN_SECRET:
            text = text.replace(secret, REDACTED)
    for shape in _SECRET_SHAPES:
        text = shape.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
