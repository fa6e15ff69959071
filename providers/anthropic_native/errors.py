"""Classify every Anthropic failure through the shared rules (E1-E3).

The SDK's typed errors carry the HTTP status and the body; an `event: error` inside a
200 stream is either decoded by our raw reader (see events.py) or, on the SDK's typed
path, raised as a plain `APIStatusError` with status 200, so the status is ignored and
the body's `error.type` decides, exactly as on the HTTP path. Connection failures are
wrapped by the SDK (`APIConnectionError`, `APITimeoutError`); the transport error under
them, or a raw one from reading the body, is classified by `providers.streaming`.
"""

from __future__ import annotations

import anthropic

from providers.anthropic_native.events import PROVIDER
from providers.errors import STREAM_INTERRUPTED, classify_error_body, classify_failure
from providers.streaming import classify_transport_error
from providers.types import ProviderError


def classify_exception(exc: BaseException) -> ProviderError:
    """Any exception raised while streaming -> a complete ProviderError."""
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code if exc.status_code != 200 else None
        body = exc.body if exc.body is not None else {"error": {"message": exc.message}}
        return classify_error_body(provider=PROVIDER, body=body, status=status, original_error=exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return classify_failure(
            provider=PROVIDER, message="Anthropic did not answer in time", timeout=True,
            original_error=exc,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        under = classify_transport_error(PROVIDER, cause, wrapper=exc) if cause is not None else None
        if under is not None:
            return under
        return classify_failure(
            provider=PROVIDER, message=f"connection to Anthropic lost: {exc}",
            error_type=STREAM_INTERRUPTED, original_error=exc,
        )
    transport = classify_transport_error(PROVIDER, exc)
    if transport is not None:
        return transport
    return classify_failure(
        provider=PROVIDER, message=f"{exc.__class__.__name__}: {exc}", original_error=exc
    )
