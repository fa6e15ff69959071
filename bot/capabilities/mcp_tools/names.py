"""The name a server's tool goes by in requests: `<server>__<tool>`.

Every provider's tool-name rules at once: OpenAI's functions take `[a-zA-Z0-9_-]`, at most
64; Anthropic's `^[a-zA-Z0-9_-]{1,128}$`; Gemini's function declarations must start with
a letter or `_` (dots and colons allowed too, at most 128). So: letters, digits, `_` and
`-`, a letter first (server names start with one, `servers_file.py`), at most 64. A tool
name with other characters has them replaced by `_`, and a name that was changed or is
too long ends with a short hash of the original, so two tools never share a name.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
SEPARATOR = "__"
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
HASH_LENGTH = 8


def tool_name(server: str, tool: str) -> str:
    """The namespaced, provider-safe name of `server`'s tool `tool` (pure, stable)."""
    safe = UNSAFE.sub("_", tool)
    whole = f"{server}{SEPARATOR}{safe}"
    if safe == tool and len(whole) <= MAX_NAME and tool:
        return whole
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:HASH_LENGTH]
    room = MAX_NAME - len(server) - len(SEPARATOR) - 1 - HASH_LENGTH
    return f"{server}{SEPARATOR}{safe[:room]}_{digest}"
