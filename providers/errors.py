"""Every provider failure becomes one complete `ProviderError`, classified once.

Every adapter funnels its failures through `classify_failure`, so the same failure gets
the same error whether it arrived as an HTTP status, an SDK exception or an error event
in the middle of a 200 stream. The error's `kind` (see `providers.failure_kind`) is the
one classification: the turn's next step, the embed's title, headline and tips are all
looked up on it. `type` and `retryable` follow from the kind; `retry_after` is what the
provider asked us to wait, when it said; `reason` and `facts` are the finer cause and
the values a headline names, decided here from the same evidence. Nothing changes an
error after it is made (the type is frozen): whoever makes one knows its provider.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from providers.error_body import as_text, error_fields, original_texts
from providers.failure_kind import (
    KIND_TYPE,
    STREAM_INTERRUPTED,
    Evidence,
    decide_kind,
    decide_reason,
)
from providers.metrics import PROVIDER_ERRORS, provider_label
from providers.redaction import redact_secrets
from providers.retry_after import retry_after_seconds
from providers.safe_transport import AddressRefused
from providers.types import ProviderError

__all__ = [
    "STREAM_INTERRUPTED", "classify_error_body", "classify_failure", "error_fields",
    "internal_failure",
]

_WS = re.compile(r"\s+")


def _http_status(status: int | None, code: str | int | None) -> int | None:
    """The failure's HTTP status; a numeric body code stands in for it. 2xx is no failure."""
    if status is not None and not 200 <= status < 300:
        return status
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        value = code
    elif isinstance(code, str) and code.strip().isdigit():
        value = int(code.strip())
    else:
        return None
    return value if 100 <= value <= 599 and not 200 <= value < 300 else None


def _norm(value: Any) -> str:
    return str(value).strip().lower() if value is not None else ""


def _default_details(details: Any, original_error: Any) -> Any:
    if details is not None:
        return details
    if isinstance(original_error, Mapping):
        return original_error
    body = getattr(original_error, "body", None)
    return body if isinstance(body, (Mapping, list)) else None


def _body_of(original_error: Any) -> Any:
    if isinstance(original_error, BaseException):
        return getattr(original_error, "body", None)
    return original_error


def _refused_address(original_error: Any) -> str | None:
    """Why the bot refused the address, when an `AddressRefused` is the failure or under it."""
    seen: set[int] = set()
    exc = original_error if isinstance(original_error, BaseException) else None
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, AddressRefused):
            return exc.reason
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _request_address(original_error: Any) -> str | None:
    """Host and path of the request that failed, as an SDK exception carries it (httpx's
    `request.url`, aiohttp's `request_info.url`); never the query or a user name."""
    try:  # httpx raises RuntimeError for a response whose request was never set
        request = getattr(original_error, "request", None) or getattr(original_error, "request_info", None)
        url = getattr(request, "url", None)
        if url is None:
            return None
        parts = urlsplit(str(url))
        host = parts.hostname
    except (RuntimeError, ValueError):
        return None
    if not host:
        return None
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path}"


def _haystack(message: str, original_error: Any, details: Any, code: str | None) -> str:
    """Every text the failure carries, for the wording checks: each whitespace-folded, one per
    line, so words from two different parts never make a phrase together."""
    parts = [message, *original_texts(original_error), as_text(details), code or ""]
    return "\n".join(_WS.sub(" ", p) for p in parts if p)


def classify_failure(
    *,
    provider: str | None,
    message: str,
    status: int | None = None,
    code: str | int | None = None,
    error_type: str | None = None,
    original_error: Any = None,
    details: Any = None,
    timeout: bool = False,
    connection_failed: bool = False,
    keep_body: Any = None,
) -> ProviderError:
    """Turn one failure into a complete ProviderError.

    `code` is the provider's own code, `error_type` its type/status word (OpenAI `type`,
    Anthropic `error.type`, Gemini `status`), `status` the HTTP status when there was one.
    `keep_body` is kept as the details when nothing else gave any (the provider's own words).
    """
    http_status = _http_status(status, code)
    code_text = str(code).strip() if code is not None and str(code).strip() else None
    final_code = code_text or (str(http_status) if http_status is not None else None)
    details = _default_details(details, original_error)
    if details is None:
        details = keep_body
    codes = tuple(dict.fromkeys(c for c in (_norm(code), _norm(error_type)) if c))
    clean_message = redact_secrets(message or "") or (error_type or final_code or "provider error")
    evidence = Evidence(
        provider=provider or "", status=http_status, codes=codes, message=clean_message,
        text=_haystack(clean_message, original_error, details, final_code), details=details,
        timeout=timeout, connection_failed=connection_failed,
        refused_address=_refused_address(original_error), address=_request_address(original_error),
        sources=(details, _body_of(original_error)),
    )
    kind = decide_kind(evidence)
    reason, facts = decide_reason(kind, evidence)
    coarse_type, retryable = KIND_TYPE[kind]
    PROVIDER_ERRORS.labels(provider_label(provider), kind).inc()
    return ProviderError(
        type=coarse_type, message=clean_message, retryable=retryable, code=final_code,
        status=http_status, provider=provider, original_error=original_error, details=details,
        kind=kind, retry_after=retry_after_seconds(original_error, details), reason=reason,
        facts=facts,
    )


def internal_failure(*, provider: str | None, message: str, code: str) -> ProviderError:
    """A failure of ours, not the provider's (a stream bug, an error chunk without an
    error): not worth retrying on another key, so the next model."""
    PROVIDER_ERRORS.labels(provider_label(provider), "request_refused").inc()
    return ProviderError(type="api_error", message=message, retryable=False, code=code,
                         provider=provider, kind="request_refused")


def classify_stream_error(*, provider: str, body: Any) -> ProviderError:
    """An error payload inside a 200 stream, classified exactly like the same body on the
    HTTP path; the HTTP status some providers put in it (`status_code`, `status`) counts."""
    inner = body.get("error", body) if isinstance(body, Mapping) else body
    status = None
    if isinstance(inner, Mapping):
        for key in ("status_code", "status"):
            value = inner.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                status = value
                break
    return classify_error_body(provider=provider, body=body, status=status)


def classify_error_body(
    *, provider: str, body: Any, status: int | None = None, original_error: Any = None,
    keep_body: bool = False,
) -> ProviderError:
    """Classify an error body (HTTP error response or a mid-stream error payload);
    `keep_body` keeps the whole body as the details when its fields gave none."""
    message, code, error_type, details = error_fields(body)
    return classify_failure(
        provider=provider, message=message, status=status, code=code, error_type=error_type,
        original_error=original_error if original_error is not None else body, details=details,
        keep_body=body if keep_body else None,
    )
