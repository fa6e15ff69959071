"""Take think blocks and `<details>` blocks out of streamed text (pure, per stream).

Think tags use the single shared definition in `providers.text.reasoning_tags`.
`<details>` (any attributes, any case) nests, so its blocks are matched by depth. A tag
cut off at the end of a chunk is held until the next chunk decides it, so the visible
text and the captured blocks do not depend on how the text was chunked. A stray think
closer outside a block is dropped (text already shown is never taken back); a stray
`</details>` is ordinary text. A block still open when the stream ends is captured.

Tags inside code are the model's content, not markup: a tag in a fenced code block or
in an open inline code span (`<details>` explained in prose) is left visible, so a code
example is never mangled and an explanation never disappears into an unclosed block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from providers.text.reasoning_tags import (
    THINK_CLOSE_RE,
    THINK_TAG_RE,
    find_think_close,
    find_trailing_tag_prefix,
)
from stream.splitter import FENCE_CLOSE_RE, FENCE_OPEN_RE

BlockKind = Literal["think", "details"]

DETAILS_OPEN_RE = re.compile(r"<details(?:\s[^<>]*)?>", re.IGNORECASE | re.ASCII)
DETAILS_CLOSE_RE = re.compile(r"</details\s*>", re.IGNORECASE | re.ASCII)
_DETAILS_ANY_RE = re.compile(r"<details(?:\s[^<>]*)?>|</details\s*>", re.IGNORECASE | re.ASCII)
# An opening `<details ...` whose attributes are still arriving is held this long at most.
MAX_DETAILS_FRAGMENT = 256
_DETAILS_WORDS = ("<details", "</details")
_PARTIAL_DETAILS_RE = re.compile(r"<details\s[^<>]*\Z|</details\s*\Z", re.IGNORECASE | re.ASCII)
_BACKTICK_RUN = re.compile(r"`+")


@dataclass(slots=True, frozen=True)
class CapturedBlock:
    """One hidden block: its kind and its inner text (tags removed)."""

    kind: BlockKind
    text: str


def _held_from(text: str) -> int:
    """Index where a possibly unfinished tag starts at the end of `text` (len if none)."""
    hold = len(text)
    think = find_trailing_tag_prefix(text)
    if think is not None:
        hold = think.index
    tail_start = text.rfind("<", max(0, len(text) - MAX_DETAILS_FRAGMENT))
    if tail_start >= 0 and tail_start < hold:
        tail = text[tail_start:]
        lowered = tail.lower()
        if any(word.startswith(lowered) for word in _DETAILS_WORDS) or _PARTIAL_DETAILS_RE.match(tail):
            hold = tail_start
    return hold


class _CodeContext:
    """Whether the visible text emitted so far ends inside code (fence or inline span)."""

    __slots__ = ("fence", "_line")

    def __init__(self) -> None:
        self.fence: str | None = None  # the backtick run of the open fence
        self._line: list[str] = []  # the current, unfinished line

    def advance(self, text: str) -> None:
        start = 0
        while True:
            newline = text.find("\n", start)
            if newline < 0:
                if start < len(text):
                    self._line.append(text[start:])
                return
            self._line.append(text[start:newline])
            self._end_line("".join(self._line))
            self._line = []
            start = newline + 1

    def _end_line(self, line: str) -> None:
        if self.fence is None:
            opener = FENCE_OPEN_RE.fullmatch(line)
            if opener:
                self.fence = opener.group(1)
        else:
            closer = FENCE_CLOSE_RE.fullmatch(line)
            if closer and len(closer.group(1)) >= len(self.fence):
                self.fence = None

    def in_code(self) -> bool:
        if self.fence is not None:
            return True
        if not self._line:
            return False
        # An inline code span opens with a backtick run and closes with a run as long.
        open_run = 0
        for run in _BACKTICK_RUN.finditer("".join(self._line)):
            length = run.end() - run.start()
            if open_run == 0:
                open_run = length
            elif length == open_run:
                open_run = 0
        return open_run != 0


class BlockCapture:
    """Streaming filter: `feed(text)` returns the visible part, blocks go to `.blocks`."""

    __slots__ = ("blocks", "_held", "_mode", "_inner", "_depth", "_code")

    def __init__(self) -> None:
        self.blocks: list[CapturedBlock] = []
        self._code = _CodeContext()
        self._held = ""
        self._mode: BlockKind | None = None
        self._inner: list[str] = []
        self._depth = 0

    def feed(self, text: str) -> str:
        """Visible text released by this chunk (possibly empty while a tag is undecided)."""
        if not self._held and self._mode is None and "<" not in text:
            self._code.advance(text)
            return text
        buffer = self._held + text
        self._held = ""
        return self._scan(buffer, final=False)

    def flush(self) -> str:
        """End of stream: held text outside a block is visible; an open block is captured."""
        buffer, self._held = self._held, ""
        visible = self._scan(buffer, final=True)
        if self._mode is not None:
            self._close_block()
        return visible

    def _scan(self, buffer: str, *, final: bool) -> str:
        out: list[str] = []
        position = 0
        while position < len(buffer):
            if self._mode is None:
                position = self._scan_outside(buffer, position, out, final)
            elif self._mode == "think":
                position = self._scan_think(buffer, position, final)
            else:
                position = self._scan_details(buffer, position, final)
            if position < 0:
                break
        return "".join(out)

    def _scan_outside(self, buffer: str, position: int, out: list[str], final: bool) -> int:
        think = THINK_TAG_RE.search(buffer, position)
        details = _DETAILS_ANY_RE.search(buffer, position)
        while details is not None and details.group(0)[1] == "/":
            # A stray `</details>` is plain text; look for a real opener after it.
            details = _DETAILS_ANY_RE.search(buffer, details.end())
        match = think
        if details is not None and (think is None or details.start() < think.start()):
            match = details
        if match is None:
            rest = buffer[position:]
            hold = len(rest) if final else _held_from(rest)
            self._emit(rest[:hold], out)
            self._held = rest[hold:]
            return -1
        self._emit(buffer[position : match.start()], out)
        if self._code.in_code():
            self._emit(match.group(0), out)  # markup written inside code is content
        elif match is details:
            self._mode, self._depth = "details", 1
        elif THINK_CLOSE_RE.fullmatch(match.group(0)) is None:
            self._mode = "think"
        # else: a stray think closer, dropped.
        return match.end()

    def _emit(self, text: str, out: list[str]) -> None:
        if text:
            out.append(text)
            self._code.advance(text)

    def _scan_think(self, buffer: str, position: int, final: bool) -> int:
        close = find_think_close(buffer, position)
        if close is None:
            self._keep_inner(buffer[position:], final, think=True)
            return -1
        self._inner.append(buffer[position : close.start()])
        self._close_block()
        return close.end()

    def _scan_details(self, buffer: str, position: int, final: bool) -> int:
        match = _DETAILS_ANY_RE.search(buffer, position)
        if match is None:
            self._keep_inner(buffer[position:], final, think=False)
            return -1
        if match.group(0)[1] == "/":
            self._depth -= 1
            if self._depth == 0:
                self._inner.append(buffer[position : match.start()])
                self._close_block()
                return match.end()
        else:
            self._depth += 1
        self._inner.append(buffer[position : match.end()])
        return match.end()

    def _keep_inner(self, rest: str, final: bool, *, think: bool) -> None:
        """Inside a block: keep its text, holding a tail that may be an unfinished tag."""
        if final:
            hold = len(rest)
        elif think:
            fragment = find_trailing_tag_prefix(rest)
            hold = fragment.index if fragment is not None and fragment.kind == "close" else len(rest)
        else:
            hold = _held_from(rest)
        self._inner.append(rest[:hold])
        self._held = rest[hold:]

    def _close_block(self) -> None:
        if self._mode is None:
            return
        self.blocks.append(CapturedBlock(self._mode, "".join(self._inner)))
        self._mode, self._inner, self._depth = None, [], 0
