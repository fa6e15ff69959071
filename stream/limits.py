"""Bounds on one answer, so a hostile or broken endpoint cannot hold a reply open, flood a
channel or fill memory.

- `first_content_seconds`: a response that shows nothing (text or a tool call) in this
  time failed (a timeout another key may retry). Keep-alive comments never count: they
  produce no chunk.
- `idle_seconds`: the same between two pieces of content, once the answer has begun.
- `total_seconds`: the whole answer's deadline; past it the answer ends where it is,
  like a stop (no retry: what was said stays, with a note).
- `max_calls`: tool calls kept from one response; more are dropped (logged).
- `max_thought_chars`: reasoning kept for the thought log; the tail is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from providers.errors import classify_failure
from providers.types import ProviderError


@dataclass(frozen=True, slots=True)
class StreamLimits:
    first_content_seconds: float = 90.0
    idle_seconds: float = 120.0
    total_seconds: float = 300.0
    max_calls: int = 8
    max_thought_chars: int = 200_000


# `ProviderError.reason` of a stream that showed nothing in time, before and after its first content.
SILENT, STOPPED = "silent", "stopped"


def content_timeout(first: bool, seconds: float, provider: str | None = None) -> ProviderError:
    """The stream showed no content in time: a timeout worth one more key. `provider` is
    the one the stream came from, when the caller said. The reason and the wait are kept
    as facts, so a reader who set the address can be told "sent nothing for N s"."""
    what = "no content" if first else "no further content"
    error = classify_failure(provider=provider, message=f"{what} from the provider for {seconds:g} seconds",
                             code="first_content_deadline" if first else "content_idle_deadline",
                             timeout=True)
    return replace(error, reason=SILENT if first else STOPPED, facts={"seconds": f"{seconds:g}"})
