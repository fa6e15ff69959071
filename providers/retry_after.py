"""How long the provider asked us to wait before trying again, when it said.

Two places say it: a `Retry-After` (seconds) or `Retry-After-Ms` header on the HTTP
response the SDK error keeps, and Gemini's `google.rpc.RetryInfo` detail
(`"retryDelay": "37s"`, fractions allowed) in the error body. An HTTP-date Retry-After,
garbage, a negative or an infinite value is no answer: classification has no clock, and
the caller's default wait is better than a wrong one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from providers.error_body import walk

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*s\s*$")


def _seconds(value: Any, scale: float = 1.0) -> float | None:
    try:
        seconds = float(value) * scale
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def from_headers(headers: Any) -> float | None:
    """Seconds from Retry-After-Ms (preferred: finer) or Retry-After; None when neither is usable."""
    getter = getattr(headers, "get", None)
    if getter is None:
        return None
    try:
        millis, seconds = getter("retry-after-ms"), getter("retry-after")
    except Exception:  # noqa: BLE001 - a strange header object is no answer, not a failure
        return None
    found = _seconds(millis, 0.001) if millis is not None else None
    if found is None and seconds is not None:
        found = _seconds(seconds)
    return found


def from_details(details: Any) -> float | None:
    """Seconds from the first RetryInfo `retryDelay` ("37s") anywhere in the details."""
    for _, value in [(None, details), *walk(details)]:
        if isinstance(value, Mapping):
            delay = value.get("retryDelay")
            if isinstance(delay, str) and (match := _DURATION.match(delay)):
                return _seconds(match.group(1))
    return None


def retry_after_seconds(original_error: Any, details: Any) -> float | None:
    """The wait the provider asked for: the response's headers first, then the body's details."""
    response = getattr(original_error, "response", None)
    found = from_headers(getattr(response, "headers", None))
    return found if found is not None else from_details(details)
