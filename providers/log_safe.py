"""One value a provider sent, made safe for a log line.

A provider chooses tool names, error codes, model names and statuses; a line break in
one of them would start a forged log line, and a megabyte of them would bury the log.
`loggable` escapes every control, format and line/paragraph separator character and
bounds the length, so whatever a provider sends stays inside one bounded line.
"""

from __future__ import annotations

import unicodedata
from typing import Any

LOG_VALUE_LIMIT = 200
# Cc controls (\n, \r, ESC...), Cf format characters (bidi overrides hide text),
# Zl/Zp line and paragraph separators (U+2028/9 break lines in some viewers), Cs surrogates.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escaped(ch: str) -> str:
    if unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
        return ch
    if ch in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def loggable(value: Any, limit: int = LOG_VALUE_LIMIT) -> str:
    """`value` as text with control characters escaped, at most `limit` characters plus a
    short note of how much was cut."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit and text.isprintable():
        return text  # the common case: a plain short name
    out: list[str] = []
    size = 0
    for index, ch in enumerate(text):
        piece = _escaped(ch)
        if size + len(piece) > limit:
            return "".join(out) + f"…[{len(text) - index} more chars]"
        out.append(piece)
        size += len(piece)
    return "".join(out)
