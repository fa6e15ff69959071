"""Reading provider error bodies, whatever their shape.

OpenAI-style `{"error": {"message", "type", "code"}}`, Anthropic `{"type": "error",
"error": {"type", "message"}}`, Gemini `{"error": {"code", "message", "status",
"details"}}`, OpenRouter's `metadata` (with the upstream's own text in `raw`), an SDK
exception holding one of those in `.body`, or plain text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

# Deep enough for every provider's body; bounded so a hostile body cannot recurse for ever.
MAX_DEPTH = 6


def as_text(value: Any) -> str:
    """A value as text for wording checks: strings as they are, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def walk(value: Any, depth: int = 0) -> Iterator[tuple[str | None, Any]]:
    """(key, value) pairs of nested mappings and lists, bounded in depth."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key), item
            yield from walk(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield None, item
            yield from walk(item, depth + 1)


def original_texts(original: Any) -> list[str]:
    """The texts an original error carries: its message, a string, or a body's message fields."""
    if original is None:
        return []
    if isinstance(original, str):
        return [original]
    if isinstance(original, BaseException):
        texts = [str(original)]
        body = getattr(original, "body", None)
        if body is not None and body is not original:
            texts.extend(original_texts(body))
        return texts
    if isinstance(original, Mapping):
        return _mapping_texts(original)
    return [str(original)]


def _mapping_texts(original: Mapping[str, Any]) -> list[str]:
    texts: list[str] = []
    for key in ("message", "detail", "body"):
        value = original.get(key)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, Mapping):
            texts.extend(_mapping_texts(value))
    inner = original.get("error")
    if isinstance(inner, Mapping):
        texts.extend(v for k in ("message", "detail") if isinstance(v := inner.get(k), str))
    elif isinstance(inner, str):
        texts.append(inner)
    return texts


def error_fields(body: Any) -> tuple[str, str | int | None, str | None, Any]:
    """(message, code, type, details) of an error body in any provider's shape."""
    inner = body.get("error", body) if isinstance(body, Mapping) else body
    if isinstance(inner, str):
        return inner, None, None, None
    if not isinstance(inner, Mapping):
        return as_text(inner), None, None, None
    message = inner.get("message")
    message = message if isinstance(message, str) else as_text(message)
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
