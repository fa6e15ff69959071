"""The operator's `MCP_SERVERS` file: the common `mcpServers` JSON form, checked whole.

    {"mcpServers": {
        "notes": {"command": "python", "args": ["-m", "notes_server"], "env": {"DIR": "/srv/notes"}},
        "wiki": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."}}}}

A server is stdio (`command`, optional `args`, `env`, `cwd`) or streamable HTTP (`url`,
optional `headers`); `type` may say which (`stdio`, `http`, `streamable-http`; `sse`, the
older transport, is refused). Anything else is a mistake the operator reads in one line
(`ServersFileError`) naming the file and the problem, never a traceback. A server's
name becomes the prefix of its tools' names (`names.py`), so it is kept within the
providers' tool-name characters. Header values and `env` are never logged or shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MAX_SERVERS = 16
MAX_FILE_BYTES = 256 * 1024
SERVER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,23}$")  # the tools' prefix: see names.py
STDIO_KEYS = frozenset({"type", "command", "args", "env", "cwd"})
HTTP_KEYS = frozenset({"type", "url", "headers"})
TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}


class ServersFileError(ValueError):
    """The file cannot be used; `str()` is the one line the operator reads."""


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server as the operator named it: stdio when `command` is set, else HTTP."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


def read_servers(path: Path) -> tuple[ServerSpec, ...]:
    """The servers `path` names; ServersFileError (naming the file) when it cannot be used."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ServersFileError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ServersFileError(f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        return parse_servers(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ServersFileError(f"{path}: not UTF-8 text") from None
    except ServersFileError as exc:
        raise ServersFileError(f"{path}: {exc}") from None


def parse_servers(text: str) -> tuple[ServerSpec, ...]:
    """The servers of a file's text (pure); ServersFileError saying what is wrong."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServersFileError(f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise ServersFileError('expected an object with "mcpServers": {"<name>": {...}}')
    servers = document["mcpServers"]
    if len(servers) > MAX_SERVERS:
        raise ServersFileError(f"{len(servers)} servers; at most {MAX_SERVERS}")
    return tuple(_server(name, entry) for name, entry in servers.items())


def _server(name: str, entry: Any) -> ServerSpec:
    if not SERVER_NAME.match(name):
        raise ServersFileError(f"server name {name[:40]!r} must start with a letter and hold only letters, "
                               "digits, _ and - (at most 24)")
    if not isinstance(entry, dict):
        raise ServersFileError(f"server {name}: expected an object")
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    if kind not in TYPES:
        raise ServersFileError(f"server {name}: type {str(kind)[:20]!r} is not stdio or http "
                               "(the older sse transport is not supported)")
    return _stdio(name, entry) if TYPES[kind] == "stdio" else _http(name, entry)


def _stdio(name: str, entry: dict[str, Any]) -> ServerSpec:
    _only(name, entry, STDIO_KEYS)
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ServersFileError(f"server {name}: a stdio server needs \"command\" (a program to run)")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ServersFileError(f"server {name}: \"args\" must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ServersFileError(f"server {name}: \"cwd\" must be a string")
    return ServerSpec(name, command=command, args=tuple(args), env=_strings(name, entry, "env"), cwd=cwd)


def _http(name: str, entry: dict[str, Any]) -> ServerSpec:
    _only(name, entry, HTTP_KEYS)
    url = entry.get("url")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServersFileError(f"server {name}: an HTTP server needs \"url\" starting with http:// or https://")
    return ServerSpec(name, url=url, headers=_strings(name, entry, "headers"))


def _only(name: str, entry: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ServersFileError(f"server {name}: unknown field {unknown[0][:40]!r} (expected {', '.join(sorted(allowed))})")


def _strings(name: str, entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ServersFileError(f"server {name}: \"{key}\" must map names to strings")
    return dict(value)
