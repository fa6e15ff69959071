"""Classify every Gemini failure through the shared rules (E1-E3).

`google.genai.errors.APIError` (ClientError for 4xx, ServerError for 5xx) keeps the
whole error body in `.details` and the HTTP status (or the body's code, for an error
raised from inside a stream) in `.code`; the body decides exactly as it would for a
mid-stream error payload. Transport failures (aiohttp, or httpx2 without it) and
our own stream errors are classified by `providers.streaming`.
"""

from __future__ import annotations

from typing import Any

from google.genai import errors as genai_errors

from providers.errors import classify_failure
from providers.gemini.events import PROVIDER, classify_body
from providers.streaming import classify_transport_error
from providers.types import ProviderError


def _status(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def classify_exception(exc: BaseException) -> ProviderError:
    """Any exception raised while streaming -> a complete ProviderError."""
    if isinstance(exc, genai_errors.APIError):
        body = exc.details if isinstance(exc.details, dict) else {
            "error": {"message": exc.message, "status": exc.status, "code": exc.code}
        }
        return classify_body(body, status=_status(exc.code), original_error=exc)
    transport = classify_transport_error(PROVIDER, exc)
    if transport is not None:
        return transport
    return classify_failure(provider=PROVIDER, message=f"{exc.__class__.__name__}: {exc}", original_error=exc)
