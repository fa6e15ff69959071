"""Error normalization (normalization-rules §7) and the message classifiers (§8).

Every adapter funnels its failures through `classify_failure`, so the same failure gets
the same `ProviderError` whether it arrived as an HTTP status, an SDK exception or an
error event in the middle of a 200 stream. The classifiers are pure functions of a
`ProviderError`; presentation uses them to pick advice that fits the failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from providers.metrics import PROVIDER_ERRORS
from providers.types import ErrorType, ProviderError

# error_type an adapter passes for a body that stopped arriving mid-stream (reset, cut).
STREAM_INTERRUPTED = "stream_interrupted"

_WS = re.compile(r"\s+")


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


_DEPRECATED_OTHER = re.compile(
    r"\b(?:parameters?|fields?|arguments?|options?|headers?|endpoints?|apis?|versions?|features?)\b",
    re.IGNORECASE,
)
_MENTIONS_MODEL = re.compile(r"\bmodels?\b", re.IGNORECASE)
_DEPRECATED = re.compile(r"\bdeprecated\b", re.IGNORECASE)
# A model id: quoted/backticked, or a bare token that is not one of the words that follow
# "model" in messages about something else ("model output is invalid").
_MODEL_ID = (
    r"(?:[`'\"][^`'\"\s]+[`'\"]|(?!(?:output|outputs|response|responses|input|request|message"
    r"|content|call|calls|result|generation)\b)[\w./:@-]+)"
)
_MODEL_ERROR = _rx(
    r"\bunsupported model\b",
    r"\b(?:invalid|unknown|unrecognized) model\b",
    r"\bnot a valid model\b",
    rf"\bmodel {_MODEL_ID} (?:is )?(?:not supported|unsupported|not found|unavailable|invalid"
    r"|does not exist)",
    r"\bmodels/\S+ is not found\b",
    r"\bmodel (?:not found|does not exist|is not available)\b",
    r"\bno such model\b",
    r"\bmodel_not_found\b",
)
_CONTEXT_LENGTH = _rx(
    r"\bmaximum context length\b",
    r"\bcontext length (?:is|of|exceeded)\b",
    r"\bcontext_length_exceeded\b",
    r"\bcontext window (?:is )?exceeded\b",
    r"\breduce the length of\b",
    r"\bprompt is too long\b",
)
_BALANCE = _rx(
    r"\binsufficient balance\b",
    r"\bbalance is insufficient\b",
    r"\bno resource package\b",
    r"\bplease recharge\b",
    r"\binsufficient_user_quota\b",
    r"\bexceeded your current quota\b",
    r"\binsufficient_quota\b",
    r"\bbilling hard limit has been reached\b",
    # Anthropic's wording of an exhausted prepaid balance (a 400 invalid_request_error).
    r"\bcredit balance is too low\b",
    # Z.ai's mainland wording of the same 1113 error ("balance insufficient", "recharge").
    r"余额不足",
    r"无可用资源包",
    r"请充值",
)
_BARE_CREDITS = _rx(r"\binsufficient credits\b", r"\bnot enough credits\b")
_AFFORDABILITY = _rx(r"\brequires more credits\b", r"\bcan only afford\b", r"\bfewer max_tokens\b")
_CONTENT_BLOCK = _rx(
    r"\bcontent[ _-]?filter(?:ing|ed)?\b",
    r"\bcontent[ _-]?policy\b",
    r"\bcontent management policy\b",
    r"\bsafety system\b",
    r"\binput was flagged\b",
    r"\bflagged by (?:the )?moderation\b",
)
# Z.ai's billing code, as the error's code or inside a recorded body ("code": "1113").
_ZAI_BILLING_CODE = re.compile(r'"code"\s*:\s*"?1113\b')
_KEY_LIKE = re.compile(r"\b(?:sk-[A-Za-z0-9_*.-]{8,}|AIza[0-9A-Za-z_-]{20,})")

_MODEL_CODES = frozenset({"model_not_found", "model_not_available", "unsupported_model"})
_BLOCK_CODES = frozenset({"content_filter", "content_policy_violation", "content_blocked"})
_BILLING_CODES = frozenset({"insufficient_quota", "insufficient_user_quota", "1113"})
_OVERLOAD_CODES = frozenset({"overloaded_error", "overloaded", "server_error", "unavailable"})
_RATE_LIMIT_CODES = frozenset({"rate_limit_error", "rate_limit_exceeded"})
# Z.ai business codes that are limits, so they classify the same mid-stream as under a 429.
_ZAI_LIMIT_CODES = frozenset({"1302", "1303", "1308"})
_ANTHROPIC_NOT_RETRYABLE = frozenset(
    {"authentication_error", "permission_error", "invalid_request_error", "not_found_error"}
)


# ---- classifier inputs (C0) -----------------------------------------------------------------
def _error_text(original: Any) -> list[str]:
    """The texts C0 reads from `original_error`: message, a string, or a body's message fields."""
    if original is None:
        return []
    if isinstance(original, str):
        return [original]
    if isinstance(original, BaseException):
        texts = [str(original)]
        body = getattr(original, "body", None)
        if body is not None and body is not original:
            texts.extend(_error_text(body))
        return texts
    if isinstance(original, Mapping):
        texts: list[str] = []
        for key in ("message", "detail", "body"):
            value = original.get(key)
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, Mapping):
                texts.extend(_error_text(value))
        inner = original.get("error")
        if isinstance(inner, Mapping):
            for key in ("message", "detail"):
                value = inner.get(key)
                if isinstance(value, str):
                    texts.append(value)
        elif isinstance(inner, str):
            texts.append(inner)
        return texts
    return [str(original)]


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _haystack(err: ProviderError) -> str:
    parts = [err.message or "", *_error_text(err.original_error), _as_text(err.details), _as_text(err.code)]
    return _WS.sub(" ", " \n ".join(p for p in parts if p))


# ---- the four classifiers (C1-C4) ------------------------------------------------------------
def _model_text(text: str) -> bool:
    if _MODEL_ERROR.search(text):
        return True
    if _DEPRECATED.search(text):
        return bool(_MENTIONS_MODEL.search(text)) or not _DEPRECATED_OTHER.search(text)
    return False


def is_provider_model_error(err: ProviderError) -> bool:
    """C1: the model id itself is the problem (unknown, unsupported, deprecated, unavailable)."""
    return err.type == "model_error" or _model_text(_haystack(err))


def is_context_length_error(err: ProviderError) -> bool:
    """C2: the conversation does not fit the model's window; trimming history helps."""
    return bool(_CONTEXT_LENGTH.search(_haystack(err)))


def _balance_text(text: str, code: Any = None) -> bool:
    if _norm(code) == "1113" or _BALANCE.search(text) or _ZAI_BILLING_CODE.search(text):
        return True
    return bool(_BARE_CREDITS.search(text)) and not _AFFORDABILITY.search(text)


def is_account_balance_exhausted_error(err: ProviderError) -> bool:
    """C3: nothing is spendable; only a top-up helps (wins over C4)."""
    return _balance_text(_haystack(err), err.code)


def is_credit_affordability_error(err: ProviderError) -> bool:
    """C4: some credit remains but not enough for this request; fewer output tokens fit."""
    text = _haystack(err)
    return bool(_AFFORDABILITY.search(text)) and not _balance_text(text, err.code)


# ---- classify_failure (E1-E3) ----------------------------------------------------------------
def _http_status(status: int | None, code: str | int | None) -> int | None:
    """The failure's HTTP status; a numeric body code stands in for it (E2). 2xx is no failure."""
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


def redact_secrets(text: str) -> str:
    """Mask anything shaped like an API key so it never reaches a log or an embed."""
    return _KEY_LIKE.sub("[redacted key]", text)


def _decide(
    probe: ProviderError, status: int | None, codes: set[str], timeout: bool, connection_failed: bool
) -> tuple[ErrorType, bool]:
    text = _haystack(probe)
    if codes & _MODEL_CODES or _model_text(text) or (
        "not_found_error" in codes and _norm(probe.message).startswith("model:")
    ):
        return "model_error", False
    if codes & _BLOCK_CODES or _CONTENT_BLOCK.search(text):
        return "content_blocked", False
    if status == 429:
        billing = codes & _BILLING_CODES or _balance_text(text, probe.code) or _AFFORDABILITY.search(text)
        return ("api_error", False) if billing else ("rate_limit", True)
    if status == 402:
        return "api_error", False
    if timeout or status in (408, 504):
        return "timeout", True
    if status is not None and (500 <= status <= 599 or status == 529) or codes & _OVERLOAD_CODES:
        return "provider_overloaded", True
    if codes & _RATE_LIMIT_CODES or (probe.provider == "zai" and codes & _ZAI_LIMIT_CODES):
        return "rate_limit", True
    if "api_error" in codes:
        return "api_error", True
    if STREAM_INTERRUPTED in codes and not connection_failed:
        return "provider_overloaded", True
    return "api_error", False


def classify_failure(
    *,
    provider: str,
    message: str,
    status: int | None = None,
    code: str | int | None = None,
    error_type: str | None = None,
    original_error: Any = None,
    details: Any = None,
    timeout: bool = False,
    connection_failed: bool = False,
) -> ProviderError:
    """Turn one failure into a complete ProviderError (E3, first match wins).

    `code` is the provider's own code, `error_type` its type/status word (OpenAI `type`,
    Anthropic `error.type`, Gemini `status`), `status` the HTTP status when there was one.
    """
    http_status = _http_status(status, code)
    code_text = str(code).strip() if code is not None and str(code).strip() else None
    final_code = code_text or (str(http_status) if http_status is not None else None)
    details = _default_details(details, original_error)
    codes = {_norm(code), _norm(error_type)} - {""}
    clean_message = redact_secrets(message or "") or (error_type or final_code or "provider error")
    probe = ProviderError(
        type="api_error", message=clean_message, retryable=False, code=final_code,
        status=http_status, provider=provider, original_error=original_error, details=details,
    )
    kind, retryable = _decide(probe, http_status, codes, timeout, connection_failed)
    probe.type = kind
    probe.retryable = retryable
    PROVIDER_ERRORS.labels(provider, final_code or kind).inc()
    return probe


def error_fields(body: Any) -> tuple[str, str | int | None, str | None, Any]:
    """Pull (message, code, type, details) out of an error body in any provider's shape.

    OpenAI-style `{"error": {"message", "type", "code"}}`, Anthropic
    `{"type": "error", "error": {"type", "message"}}`, Gemini `{"error": {"code",
    "message", "status", "details"}}`, OpenRouter's `metadata` (with `raw` upstream text).
    """
    inner = body.get("error", body) if isinstance(body, Mapping) else body
    if isinstance(inner, str):
        return inner, None, None, None
    if not isinstance(inner, Mapping):
        return _as_text(inner), None, None, None
    message = inner.get("message")
    message = message if isinstance(message, str) else _as_text(message)
    code = inner.get("code")
    if not isinstance(code, (str, int)) or isinstance(code, bool):
        code = None
    error_type = inner.get("type") if isinstance(inner.get("type"), str) else None
    if error_type is None and isinstance(inner.get("status"), str):
        error_type = inner["status"]
    details = inner.get("metadata") if inner.get("metadata") is not None else inner.get("details")
    if isinstance(details, Mapping) and isinstance(details.get("raw"), str) and details["raw"]:
        message = f"{message}: {details['raw']}" if message else details["raw"]
    return message or "", code, error_type, details


def classify_error_body(
    *, provider: str, body: Any, status: int | None = None, original_error: Any = None
) -> ProviderError:
    """Classify an error body (HTTP error response or a mid-stream error payload)."""
    message, code, error_type, details = error_fields(body)
    return classify_failure(
        provider=provider, message=message, status=status, code=code, error_type=error_type,
        original_error=original_error if original_error is not None else body, details=details,
    )
