"""Where to end a Discord message that outgrew its limit (pure).

A cut prefers, in order: a paragraph break, a line break, a sentence end, a space, and
only then a hard cut. Cuts outside code fences and tables are preferred; a cut inside a
fence closes it in the finished message and reopens it with the same language in the
next one; a Markdown table is never cut unless it alone is longer than a message.

The decision looks only at the first `limit + LOOKAHEAD` characters, so a streaming
caller that waits for that much text gets exactly the cut a caller holding the whole
text would get: the split does not depend on how the text arrived.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

DISCORD_MESSAGE_LIMIT = 2000
# Characters past the limit the decision may read: the separator after a cut at the
# limit and the first characters of the next line (is it a table row?).
LOOKAHEAD = 8
# Cuts before this fraction of the limit are used only when nothing later fits.
MIN_FRACTION = 0.5

# Discord ignores indentation, and models indent fences inside list items: any indent.
FENCE_OPEN_RE = re.compile(r"[ \t]*(`{3,})([^`]*)")
FENCE_CLOSE_RE = re.compile(r"[ \t]*(`{3,})[ \t\r]*")
_TABLE_DELIMITER = re.compile(r" {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*|\s*\|\s*:?-+:?\s*\|?\s*")
_BACKTICK_RUN = re.compile(r"`+")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]")
_SENTENCE_END = frozenset(".!?")
_CJK_SENTENCE_END = frozenset("。！？")

# Candidate categories, best first.
_PARAGRAPH, _LINE, _SENTENCE, _WORD = range(4)

_Fence = tuple[str, str] | None  # (backticks, info string) of an open fence
_Candidate = tuple[int, bool, int, int, _Fence]  # category, inside fence, end, cut, fence


@dataclass(slots=True, frozen=True)
class Split:
    """One finished message and what remains.

    `text == head_raw + separator + text[cut:]`; `head` is `head_raw` plus a fence
    closer when the cut fell inside a fence, and `rest` is the fence reopener (if any)
    followed by `text[cut:]`.
    """

    head: str
    rest: str
    end: int  # head_raw == text[:end]
    cut: int  # text[end:cut] is the dropped separator (whitespace only)
    reopen: str  # the fence line prepended to `rest` ("" outside fences)


@dataclass(slots=True, frozen=True)
class _Line:
    start: int
    end: int  # index of the "\n" ending the line, or len(window)
    kind: str  # "prose", "table", "fence_open", "fence_close", "code"
    fence: _Fence  # the fence still open after this line


def _scan_lines(window: str) -> list[_Line]:
    """Classify each line of `window`; `fence` is the fence still open after the line."""
    lines: list[_Line] = []
    open_fence: _Fence = None
    start = 0
    size = len(window)
    while start <= size:
        end = window.find("\n", start)
        if end < 0:
            end = size
        body = window[start:end]
        if open_fence is None:
            match = FENCE_OPEN_RE.fullmatch(body)
            if match:
                open_fence = (match.group(1), match.group(2).strip())
                kind = "fence_open"
            elif body.lstrip(" ")[:1] == "|" and len(body) - len(body.lstrip(" ")) <= 3:
                kind = "table"
            else:
                kind = "prose"
        else:
            match = FENCE_CLOSE_RE.fullmatch(body)
            if match and len(match.group(1)) >= len(open_fence[0]):
                open_fence = None
                kind = "fence_close"
            else:
                kind = "code"
        lines.append(_Line(start, end, kind, open_fence))
        if end == size:
            break
        start = end + 1
    return _mark_pipe_tables(window, lines)


def _mark_pipe_tables(window: str, lines: list[_Line]) -> list[_Line]:
    """Tables without leading pipes: a header row, a delimiter row, then rows with a pipe."""
    in_table = False
    for index, line in enumerate(lines):
        if line.kind not in ("prose", "table"):
            in_table = False
            continue
        body = window[line.start : line.end]
        if _TABLE_DELIMITER.fullmatch(body):
            in_table = True
            if index > 0 and "|" in window[lines[index - 1].start : lines[index - 1].end]:
                previous = lines[index - 1]
                if previous.kind == "prose":
                    lines[index - 1] = _Line(previous.start, previous.end, "table", None)
        elif in_table and "|" not in body:
            in_table = False
        if in_table and line.kind == "prose":
            lines[index] = _Line(line.start, line.end, "table", None)
    return lines


def fence_closer(fence: tuple[str, str]) -> str:
    """The line that closes `fence` at the end of a finished message."""
    return "\n" + fence[0]


def fence_reopener(fence: tuple[str, str]) -> str:
    """The line that reopens `fence`, same language, at the start of the next message."""
    backticks, info = fence
    return f"{backticks}{info}\n"


def split_message(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> Split | None:
    """Finish a message at the safest boundary, or None when `text` fits in one message."""
    if len(text) <= limit:
        return None
    window = text[: limit + LOOKAHEAD]
    lines = _scan_lines(window)
    # (category, inside_fence, end, cut, fence) for every admissible cut.
    candidates: list[_Candidate] = []
    table_cuts: list[_Candidate] = []

    def admit(into: list[_Candidate], category: int, end: int, cut: int, fence: _Fence) -> None:
        extra = len(fence_closer(fence)) if fence else 0
        if 0 < end and end + extra <= limit and window[:end].strip():
            into.append((category, fence is not None, end, cut, fence))

    for index, line in enumerate(lines[:-1]):
        nxt = lines[index + 1]
        in_code = line.fence is not None and line.kind != "fence_open"
        if line.kind == "fence_open" or (line.start == line.end and not in_code):
            # Never right after an opener (an empty block); a blank line's break was
            # already offered at the end of the line before it.
            pass
        else:
            run_end = line.end
            while run_end < len(window) and window[run_end] == "\n":
                run_end += 1
            # Inside code keep the blank lines: they are part of the code.
            cut = line.end + 1 if in_code else run_end
            category = _PARAGRAPH if run_end - line.end >= 2 else _LINE
            inside_table = line.kind == "table" and nxt.kind == "table"
            # A heading belongs with what follows it: end a message after one only if
            # nothing else fits.
            heading = line.kind == "prose" and _HEADING.match(window, line.start, line.end)
            held_back = inside_table or heading
            admit(table_cuts if held_back else candidates, category, line.end, cut, line.fence)
        if line.kind == "prose":
            _inline_candidates(window, line, lambda *a: admit(candidates, *a))
    if lines[-1].kind == "prose":
        _inline_candidates(window, lines[-1], lambda *a: admit(candidates, *a))
    if not candidates:
        candidates = table_cuts
    if not candidates:
        return _hard_cut(text, lines, limit)
    minimum = int(limit * MIN_FRACTION)
    for category in (_PARAGRAPH, _LINE, _SENTENCE, _WORD):
        for inside in (False, True):
            best = [c for c in candidates if c[0] == category and c[1] == inside and c[2] >= minimum]
            if best:
                return _make(text, *max(best, key=lambda c: c[2])[2:])
    return _make(text, *max(candidates, key=lambda c: c[2])[2:])


def _code_spans(window: str, line: _Line) -> list[tuple[int, int]]:
    """Inline code spans of a line: a backtick run up to the next run of the same length
    (an opener that never closes is literal backticks, not a span)."""
    spans: list[tuple[int, int]] = []
    runs = [(m.start(), m.end()) for m in _BACKTICK_RUN.finditer(window, line.start, line.end)]
    index = 0
    while index < len(runs):
        start, end = runs[index]
        for later in range(index + 1, len(runs)):
            if runs[later][1] - runs[later][0] == end - start:
                spans.append((start, runs[later][1]))
                index = later
                break
        index += 1
    return spans


def _inline_candidates(window: str, line: _Line, admit: Callable[[int, int, int, _Fence], None]) -> None:
    """Sentence ends and spaces inside one prose line, never inside inline code."""
    spans = _code_spans(window, line) if "`" in window[line.start : line.end] else []
    position = line.start
    while position < line.end:
        char = window[position]
        if char in " \t":
            run_end = position
            while run_end < line.end and window[run_end] in " \t":
                run_end += 1
            inside = any(start < position < end for start, end in spans)
            if run_end < line.end and position > line.start and not inside:
                before = window[position - 1]
                category = _SENTENCE if before in _SENTENCE_END else _WORD
                admit(category, position, run_end, None)
            position = run_end
            continue
        if char in _CJK_SENTENCE_END and position + 1 < line.end:
            if not any(start < position < end for start, end in spans):
                admit(_SENTENCE, position + 1, position + 1, None)
        position += 1


def _fence_at(lines: list[_Line], position: int) -> tuple[_Line, _Fence]:
    """The line holding `position` and the fence open at that position."""
    before: _Fence = None
    for line in lines:
        if line.start <= position <= line.end:
            if line.kind in ("code", "fence_close"):
                return line, before  # a closer takes effect only once complete
            return line, None if line.kind == "fence_open" else before
        before = line.fence
    return lines[-1], lines[-1].fence


def _hard_cut(text: str, lines: list[_Line], limit: int) -> Split:
    """No boundary at all: cut at the limit, never inside a fence opener line, and
    inside a fence leave room for its closer."""
    end = limit
    for _ in range(3):
        line, fence = _fence_at(lines, end)
        if line.kind == "fence_open" and line.start > 0:
            end = line.start
            continue
        if fence is not None and end + len(fence_closer(fence)) > limit:
            end = max(1, limit - len(fence_closer(fence)))
            continue
        end = _grapheme_safe(text, end)
        return _make(text, end, end, _fence_at(lines, end)[1])
    line, fence = _fence_at(lines, end)
    return _make(text, end, end, fence)


def _joins(char: str) -> bool:
    """Characters that belong to the character before them (marks, joiners, modifiers)."""
    code = ord(char)
    return (
        unicodedata.combining(char) != 0
        or unicodedata.category(char) in ("Mn", "Me", "Mc")
        or char in "\u200d\ufe0e\ufe0f"
        or 0x1F3FB <= code <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (flag sequences)
    )


def _grapheme_safe(text: str, end: int) -> int:
    """Move a hard cut back so it does not split a user-perceived character."""
    floor = max(1, end - 16)
    while end > floor and end < len(text) and (_joins(text[end]) or text[end - 1] == "\u200d"):
        end -= 1
    return end


def _make(text: str, end: int, cut: int, fence: _Fence) -> Split:
    head = text[:end]
    reopen = ""
    if fence is not None:
        head = head.rstrip("\n") + fence_closer(fence)
        reopen = fence_reopener(fence)
    return Split(head=head, rest=reopen + text[cut:], end=end, cut=cut, reopen=reopen)


def open_fence(text: str) -> _Fence:
    """The fence still open at the end of `text` (None when every fence is closed)."""
    lines = _scan_lines(text)
    return lines[-1].fence if lines else None


def split_all(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> list[str]:
    """Every message `text` becomes when delivered in full (for tests and final rendering)."""
    pieces: list[str] = []
    while True:
        split = split_message(text, limit)
        if split is None:
            pieces.append(text)
            return pieces
        pieces.append(split.head)
        text = split.rest
