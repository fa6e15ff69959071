"""Recover the complete part of a cut tool-call argument payload.

A dropped delta or a proxy timeout can end a tool call's JSON mid-token; `json.loads`
then rejects the whole payload although most keys arrived intact. The repair scans the
JSON grammar once, left to right, remembering where the last complete entry of each open
container ended. When the input simply runs out, it cuts back to the deepest container
that still has a complete entry and closes everything open. It never invents a token and
refuses input that is malformed rather than truncated.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from providers.log_safe import loggable
from providers.metrics import TOOL_ARGUMENTS_TRUNCATED, provider_label

logger = logging.getLogger(__name__)

_WS = re.compile(r"[ \t\n\r]*")
# Characters that can continue a number token; the run is then validated as a whole.
_NUM_RUN = re.compile(r"[0-9+\-.eE]*")
_NUM_FULL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUM_PREFIX = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:(?<=[0-9])[eE][+-]?[0-9]*)?)?"
)
_STR_BODY = re.compile(r'[^"\\\x00-\x1f]*')
_HEX4 = re.compile(r"[0-9a-fA-F]{0,4}")
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_LITERALS = {"t": "true", "f": "false", "n": "null"}

# Parser states inside a container.
_OBJ_FIRST_KEY = 0  # after "{": a key or "}"
_OBJ_KEY = 1  # after ",": a key
_OBJ_COLON = 2  # after a key
_OBJ_VALUE = 3  # after ":"
_OBJ_AFTER = 4  # after a value: "," or "}"
_ARR_FIRST = 5  # after "[": a value or "]"
_ARR_VALUE = 6  # after ",": a value
_ARR_AFTER = 7  # after a value: "," or "]"


class _Malformed(Exception):
    """Raised inside the scan when a character cannot stand where it does."""


class _Frame:
    """One open container: its kind, parse state and the end of its last complete entry."""

    __slots__ = ("closer", "state", "last_end")

    def __init__(self, closer: str, state: int) -> None:
        self.closer = closer
        self.state = state
        self.last_end = -1


def _scan_string(raw: str, pos: int) -> int:
    """Return the index after a string starting at `pos` (its quote), or -1 if cut."""
    n = len(raw)
    pos += 1
    while True:
        pos = _STR_BODY.match(raw, pos).end()
        if pos >= n:
            return -1
        ch = raw[pos]
        if ch == '"':
            return pos + 1
        if ch != "\\":
            raise _Malformed  # a raw control character
        if pos + 1 >= n:
            return -1
        esc = raw[pos + 1]
        if esc in _SIMPLE_ESCAPES:
            pos += 2
        elif esc == "u":
            digits = _HEX4.match(raw, pos + 2).end() - (pos + 2)
            if digits < 4:
                if pos + 2 + digits >= n:
                    return -1
                raise _Malformed
            pos += 6
        else:
            raise _Malformed


def _complete_value(frame: _Frame, end: int) -> None:
    """Record a value that completed at `end` and move the frame past it."""
    frame.last_end = end
    frame.state = _OBJ_AFTER if frame.closer == "}" else _ARR_AFTER


# What one step of the scanner says: go on, the input ended (cut: repair it), or the
# root object closed (the input was complete or had junk after it: nothing to repair).
_GO, _CUT, _ROOT_CLOSED = 0, 1, 2


class _Scanner:
    """One left-to-right pass over a possibly cut JSON object; each state's step is its own method."""

    __slots__ = ("raw", "n", "pos", "stack", "pending_number_end")

    def __init__(self, raw: str, start: int) -> None:
        self.raw, self.n, self.pos = raw, len(raw), start
        self.stack = [_Frame("}", _OBJ_FIRST_KEY)]
        self.pending_number_end = -1  # a number that is complete only once a separator follows

    def run(self) -> str | None:
        raw = self.raw
        while True:
            self.pos = _WS.match(raw, self.pos).end()
            if self.pos >= self.n:
                break
            ch, frame = raw[self.pos], self.stack[-1]
            state = frame.state
            if state in (_OBJ_AFTER, _ARR_AFTER):
                step = self._after_value(ch, frame, state)
            elif state in (_OBJ_FIRST_KEY, _OBJ_KEY):
                step = self._key(ch, frame, state)
            elif state == _OBJ_COLON:
                if ch != ":":
                    raise _Malformed
                frame.state, step = _OBJ_VALUE, _GO
                self.pos += 1
            else:  # a value is due (_OBJ_VALUE, _ARR_FIRST, _ARR_VALUE)
                step = self._value(ch, frame, state)
            if step == _ROOT_CLOSED:
                return None
            if step == _CUT:
                break
        return _close(raw, self.stack)

    def _pop(self) -> int:
        """Close the innermost container; the enclosing one gains a complete value."""
        self.stack.pop()
        self.pos += 1
        if not self.stack:
            return _ROOT_CLOSED
        _complete_value(self.stack[-1], self.pos)
        return _GO

    def _after_value(self, ch: str, frame: _Frame, state: int) -> int:
        if ch == ",":
            if self.pending_number_end >= 0:
                frame.last_end = self.pending_number_end
                self.pending_number_end = -1
            frame.state = _OBJ_KEY if state == _OBJ_AFTER else _ARR_VALUE
            self.pos += 1
            return _GO
        if ch != frame.closer:
            raise _Malformed
        self.pending_number_end = -1
        return self._pop()

    def _key(self, ch: str, frame: _Frame, state: int) -> int:
        if ch == "}" and state == _OBJ_FIRST_KEY:
            return self._pop()
        if ch != '"':
            raise _Malformed
        end = _scan_string(self.raw, self.pos)
        if end < 0:
            return _CUT
        frame.state, self.pos = _OBJ_COLON, end
        return _GO

    def _value(self, ch: str, frame: _Frame, state: int) -> int:
        if ch == "]" and state == _ARR_FIRST:
            return self._pop()
        if ch == "{" or ch == "[":
            self.stack.append(_Frame("}", _OBJ_FIRST_KEY) if ch == "{" else _Frame("]", _ARR_FIRST))
            self.pos += 1
            return _GO
        if ch == '"':
            end = _scan_string(self.raw, self.pos)
            if end < 0:
                return _CUT
            _complete_value(frame, end)
            self.pos = end
            return _GO
        if ch in _LITERALS:
            return self._literal(_LITERALS[ch], frame)
        if ch == "-" or "0" <= ch <= "9":
            return self._number(frame)
        raise _Malformed

    def _literal(self, word: str, frame: _Frame) -> int:
        piece = self.raw[self.pos : self.pos + len(word)]
        if not word.startswith(piece):
            raise _Malformed
        if len(piece) < len(word):
            return _CUT  # cut inside the literal
        self.pos += len(word)
        _complete_value(frame, self.pos)
        return _GO

    def _number(self, frame: _Frame) -> int:
        end = _NUM_RUN.match(self.raw, self.pos).end()
        token = self.raw[self.pos : end]
        if end >= self.n:
            if _NUM_PREFIX.fullmatch(token) is None:
                raise _Malformed
            return _CUT  # a number at the very end may have been cut mid-digit
        if _NUM_FULL.fullmatch(token) is None:
            raise _Malformed
        frame.state = _OBJ_AFTER if frame.closer == "}" else _ARR_AFTER
        self.pending_number_end = end
        self.pos = end
        return _GO


def _scan(raw: str) -> str | None:
    """Return the repaired JSON text, or None when the input is not a cut object."""
    pos = _WS.match(raw, 0).end()
    if pos >= len(raw) or raw[pos] != "{":
        return None
    return _Scanner(raw, pos + 1).run()


def _close(raw: str, stack: list[_Frame]) -> str:
    """Cut back to the deepest container with a complete entry and close all open ones."""
    for depth in range(len(stack) - 1, 0, -1):
        if stack[depth].last_end >= 0:
            closers = "".join(frame.closer for frame in reversed(stack[: depth + 1]))
            return raw[: stack[depth].last_end] + closers
    root = stack[0]
    if root.last_end < 0:
        return "{}"
    return raw[: root.last_end] + "}"


def try_repair_incomplete_json(raw: str) -> dict | None:
    """Return the complete entries of a cut JSON object, or None."""
    if not isinstance(raw, str):
        return None
    try:
        text = _scan(raw)
    except _Malformed:
        return None
    if text is None:
        return None
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@dataclass(slots=True)
class ParsedToolArguments:
    """Tool-call arguments as the adapters hand them on."""

    args: dict
    parsed: bool
    truncated: bool


def parse_tool_arguments(raw: str, *, adapter: str = "", tool_name: str = "") -> ParsedToolArguments:
    """Parse a tool call's argument text, falling back to the truncation repair."""
    if not raw or not raw.strip():
        return ParsedToolArguments({}, False, False)
    try:
        value: Any = json.loads(raw)
    except (ValueError, RecursionError):
        pass
    else:
        if isinstance(value, dict):
            return ParsedToolArguments(value, True, False)
        return ParsedToolArguments({}, False, False)
    repaired = try_repair_incomplete_json(raw)
    if repaired is None:
        logger.error(
            "tool arguments unparseable and not a truncation; refused "
            "(adapter=%s tool=%s raw_length=%d)",
            loggable(adapter),
            loggable(tool_name),
            len(raw),
        )
        return ParsedToolArguments({}, False, False)
    TOOL_ARGUMENTS_TRUNCATED.labels(provider=provider_label(adapter)).inc()
    # Only sizes and counts are logged: the payload may hold user data or secrets.
    facts = {"adapter": loggable(adapter), "tool": loggable(tool_name), "recovered_keys": len(repaired),
             "raw_length": len(raw)}
    logger.error(
        "tool_arguments_truncated: recovered a cut payload "
        "(adapter=%s tool=%s recovered_keys=%d raw_length=%d)",
        facts["adapter"],
        facts["tool"],
        len(repaired),
        len(raw),
        extra={"tool_arguments_truncated": facts},
    )
    return ParsedToolArguments(repaired, False, True)
