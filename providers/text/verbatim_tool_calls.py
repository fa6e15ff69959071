"""Recover tool calls that a model wrote as text.

Some chat models served through custom endpoints narrate and then write
`search({"q": "cats"})` in their visible answer instead of using native tool calling.
The parser watches the stream for a known tool name followed by `(`, possibly wrapped in
inline code or a fenced block, collects until the parentheses balance and accepts the
call only when its arguments validate; anything else is released as text exactly as it
was written.

Work stays linear in the input: between calls only the tail that could still become a
call is held back (growing whitespace or language-word runs are appended without a
rescan), and a call being collected is scanned incrementally.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from providers.types import FunctionCall, ToolSpec

_LANG = r"[\w.+#\-]"
# An opening wrapper: a fence (``` + language word + newline) or 1-3 backticks,
# optionally followed by a language word and whitespace.
_WRAP = rf"```{_LANG}*[^\S\n]*\n\s*|`{{1,3}}(?:{_LANG}+\s+)?"
_TAIL_LANG = re.compile(rf"`{{1,3}}{_LANG}+")
_LANG_RUN = re.compile(rf"{_LANG}+")
_AFTER_CLOSE = re.compile(r"(\s*)(`*)")
_CODE_SKIP = re.compile(r'[^()"]*')
_STRING_SKIP = re.compile(r'[^"\\]*')


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


@dataclass(slots=True, frozen=True)
class _Tool:
    required: tuple[str, ...]
    shorthand: str | None  # the one required string parameter, when the shorthand form `tool("value")` applies


def _describe(item: ToolSpec | str) -> tuple[str, _Tool]:
    """Read a declaration's name, required parameters and shorthand parameter."""
    if isinstance(item, str):
        return item, _Tool((), None)
    declared = getattr(item, "parameters", None)
    params = declared if isinstance(declared, Mapping) else {}
    raw_required = params.get("required", ())
    required = tuple(r for r in raw_required if isinstance(r, str)) if isinstance(
        raw_required, list | tuple
    ) else ()
    props = params.get("properties")
    shorthand = None
    if len(required) == 1 and isinstance(props, Mapping):
        schema = props.get(required[0])
        if isinstance(schema, Mapping) and schema.get("type") == "string":
            shorthand = required[0]
    return item.name, _Tool(required, shorthand)


@dataclass(slots=True)
class VerbatimFeedResult:
    """Text to show now, and a recovered call (never preceded by text in this result)."""

    visible_text: str
    function_call: FunctionCall | None


@dataclass(slots=True)
class VerbatimFlushResult:
    """Everything still held at the end of the stream, and a last recovered call."""

    pending_text: str
    function_call: FunctionCall | None


@dataclass(slots=True)
class _CallEvent:
    call: FunctionCall
    raw: str  # as written, to release as text if it cannot be returned as a call


_SCAN, _COLLECT, _AFTER = range(3)


class VerbatimToolCallParser:
    """Streaming recovery of `known_tool({...})` calls written in visible text."""

    def __init__(self, tools: Iterable[ToolSpec | str]) -> None:
        self._tools: dict[str, _Tool] = {}
        for item in tools:
            name, tool = _describe(item)
            if name:
                self._tools[name] = tool
        names = sorted(self._tools, key=lambda n: (-len(n), n))
        self._start_re: re.Pattern[str] | None = None
        self._tail_re: re.Pattern[str] | None = None
        if names:
            alternatives = "|".join(re.escape(n) for n in names)
            prefixes = sorted({n[:k] for n in names for k in range(1, len(n))}, key=lambda p: -len(p))
            name_part = rf"(?:(?:{alternatives})\s*" + "".join(
                f"|{re.escape(p)}" for p in prefixes
            ) + ")"
            self._start_re = re.compile(
                rf"(?P<wrap>{_WRAP})?(?<!\w)(?P<name>{alternatives})\s*\("
            )
            self._tail_re = re.compile(
                rf"(?:```{_LANG}*[^\S\n]*(?:\n\s*{name_part}?)?"
                rf"|`{{1,3}}(?:{name_part}|{_LANG}+(?:\s+{name_part}?)?)?"
                rf"|(?<!\w){name_part})\Z"
            )
        self.reset()

    def reset(self) -> None:
        """Forget everything held and start a new stream."""
        self._mode = _SCAN
        self._prev = ""  # last character of the stream before the held text
        self._events: deque[str | _CallEvent] = deque()
        self._tail: list[str] = []
        self._tail_ws = False
        self._tail_lang = False
        self._call: list[str] = []
        self._head_len = 0
        self._name = ""
        self._ticks = 0
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._after: list[str] = []
        self._after_ws = False

    # ---- public API -------------------------------------------------------------------

    def feed(self, text: str) -> VerbatimFeedResult:
        """Scan one delta; return visible text and at most one call."""
        if self._start_re is None:
            return VerbatimFeedResult(text, None)
        remaining = text
        while remaining:
            if self._mode == _SCAN:
                remaining = self._scan(remaining)
            elif self._mode == _COLLECT:
                remaining = self._collect(remaining)
            else:
                remaining = self._after_call(remaining)
        call = None
        if self._events and isinstance(self._events[0], _CallEvent):
            call = self._events.popleft().call
        out: list[str] = []
        while self._events and isinstance(self._events[0], str):
            out.append(self._events.popleft())
        return VerbatimFeedResult("".join(out), call)

    def flush(self) -> VerbatimFlushResult:
        """Resolve a call still queued, release all held text, then reset."""
        if self._start_re is None:
            return VerbatimFlushResult("", None)
        if self._mode == _SCAN:
            self._emit("".join(self._tail))
        elif self._mode == _COLLECT:
            self._emit("".join(self._call))
        else:
            self._emit("".join(self._after))
        call = None
        if self._events and isinstance(self._events[0], _CallEvent):
            call = self._events.popleft().call
        pending = "".join(e if isinstance(e, str) else e.raw for e in self._events)
        self.reset()
        return VerbatimFlushResult(pending, call)

    # ---- states -----------------------------------------------------------------------

    def _emit(self, text: str) -> None:
        if text:
            self._events.append(text)
            self._prev = text[-1]

    def _scan(self, text: str) -> str:
        """Look for a call start; emit what cannot become one, hold the rest."""
        if self._tail:
            # A held candidate followed by more whitespace, or a language word that goes
            # on, stays a candidate of the same start: append without a rescan.
            if self._tail_ws and text.isspace():
                self._tail.append(text)
                self._tail_lang = False
                return ""
            if self._tail_lang and _LANG_RUN.fullmatch(text):
                self._tail.append(text)
                return ""
            text = "".join(self._tail) + text
            self._tail = []
        buffer = self._prev + text
        base = len(self._prev)
        match = self._start_re.search(buffer, base)
        if match is not None:
            self._emit(buffer[base : match.start()])
            wrap = match.group("wrap") or ""
            self._ticks = len(wrap) - len(wrap.lstrip("`"))
            self._name = match.group("name")
            self._call = [match.group()]
            self._head_len = match.end() - match.start()
            self._depth = 1
            self._in_string = False
            self._escape = False
            self._mode = _COLLECT
            return buffer[match.end() :]
        tail = self._tail_re.search(buffer, base)
        cut = len(buffer) if tail is None else tail.start()
        self._emit(buffer[base:cut])
        if cut < len(buffer):
            held = buffer[cut:]
            self._tail = [held]
            self._tail_ws = held[-1].isspace()
            self._tail_lang = _TAIL_LANG.fullmatch(held) is not None
        return ""

    def _collect(self, text: str) -> str:
        """Collect call text until the parentheses balance, quote-aware."""
        pos, end = 0, len(text)
        if self._escape:
            self._escape = False
            pos = 1
        while pos < end:
            if self._in_string:
                stop = _STRING_SKIP.match(text, pos).end()
                if stop >= end:
                    break
                if text[stop] == '"':
                    self._in_string = False
                    pos = stop + 1
                elif stop + 1 < end:
                    pos = stop + 2
                else:
                    self._escape = True
                    pos = end
                continue
            stop = _CODE_SKIP.match(text, pos).end()
            if stop >= end:
                break
            char = text[stop]
            pos = stop + 1
            if char == '"':
                self._in_string = True
            elif char == "(":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    self._call.append(text[:pos])
                    self._finish_call()
                    return text[pos:]
        self._call.append(text)
        return ""

    def _finish_call(self) -> None:
        """Validate a balanced candidate; queue it as a call or release it."""
        raw = "".join(self._call)
        self._call = []
        args = self._validate(self._name, raw[self._head_len : -1])
        if args is None:
            self._emit(raw)
            self._mode = _SCAN
            return
        self._events.append(_CallEvent(FunctionCall(name=self._name, args=args), raw))
        self._prev = ")"
        if self._ticks:
            self._after = []
            self._after_ws = False
            self._mode = _AFTER
        else:
            self._mode = _SCAN

    def _validate(self, name: str, arguments: str) -> dict | None:
        tool = self._tools[name]
        stripped = arguments.strip()
        if not stripped:
            return {} if not tool.required else None
        if stripped[0] not in '{"':
            return None
        try:
            value = json.loads(stripped, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return None
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and tool.shorthand is not None:
            return {tool.shorthand: value}
        return None

    def _after_call(self, text: str) -> str:
        """Drop the closing wrapper that matches the call's opening one."""
        if self._after and self._after_ws and text.isspace():
            self._after.append(text)
            return ""
        text = "".join(self._after) + text
        self._after = []
        match = _AFTER_CLOSE.match(text)
        ticks = len(match.group(2))
        if ticks >= self._ticks:
            drop = match.end(1) + self._ticks
            if self._events and isinstance(self._events[-1], _CallEvent):
                self._events[-1].raw += text[:drop]  # released as text whole, wrapper and all
            self._prev = "`"
            self._mode = _SCAN
            return text[drop:]
        if match.end() == len(text):
            self._after = [text]
            self._after_ws = ticks == 0
            return ""
        self._mode = _SCAN
        return text
