"""Catch a tagless reasoning tail glued onto the first visible content.

Some backends concatenate the end of their reasoning buffer onto the answer with no
separator (`must do.Hello!`). The missing space after a sentence boundary is the
fingerprint: the guard judges only the first visible content after reasoning, holds it
while undecided, and cuts the glued fragment off when the rules say it fired.

The decision is made by one left-to-right pass over the candidate that never revisits a
character, so holding across many small deltas stays linear. Two readings keep the result
independent of how the content was split (the spec's chunk-boundary principle):
- the 180-character limit of steps 3 and 5 is a decision horizon: if the character after
  the boundary run is not among the first 180 core characters, the candidate is emitted;
- a `.` right after an ASCII digit at the very end of the available text is undecided
  (the digit rule needs the next character), so it is held like any open decision.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from providers.text.emoji import is_extended_pictographic

BOUNDARIES = frozenset(".!?。！？")
ANSWER_PUNCTUATION = frozenset("*_([{\"'“”‘’「『（")
HORIZON = 180

_WS, _SCAN, _RUN, _REM_WS = range(4)
_HOLD, _EMIT, _FIRE = range(3)


def is_lowercase_letter(ch: str) -> bool:
    """A letter whose upper-case form differs from it (title-case letters excluded)."""
    return ch.isalpha() and ch.upper() != ch and unicodedata.category(ch) != "Lt"


def is_answer_start(ch: str) -> bool:
    """Quote, bracket or emphasis opener, non-lowercase letter, or emoji: what may start a visible answer."""
    if ch in ANSWER_PUNCTUATION:
        return True
    if ch.isalpha():
        return not is_lowercase_letter(ch)
    return is_extended_pictographic(ch)


def _is_ascii_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


@dataclass(slots=True)
class SpillResult:
    """Content to show, whether it differs from the input, and a spilled fragment."""

    content: str
    changed: bool
    spilled_thought: str | None


class ReasoningContentSpillGuard:
    """Judges the first visible content after reasoning for a glued reasoning tail."""

    __slots__ = (
        "_armed",
        "_started",
        "_held",
        "_length",
        "_phase",
        "_ws_len",
        "_core_len",
        "_ticks",
        "_fragment_has_ws",
        "_prev",
        "_dot_pending",
        "_cut",
    )

    def __init__(self) -> None:
        self._armed = False
        self._started = False
        self._reset_candidate()

    def _reset_candidate(self) -> None:
        self._held: list[str] = []
        self._length = 0  # characters of the candidate scanned so far
        self._phase = _WS
        self._ws_len = 0
        self._core_len = 0
        self._ticks = 0
        self._fragment_has_ws = False
        self._prev = ""
        self._dot_pending = False
        self._cut = 0  # candidate index where the remainder starts, once known

    def observe_reasoning(self, text: object) -> None:
        """Arm the guard when reasoning arrives before any visible content."""
        if isinstance(text, str) and text and not self._started:
            self._armed = True

    def feed(self, content: str) -> SpillResult:
        """Pass content through, hold it while undecided, or cut a spilled fragment."""
        if not content:
            return SpillResult(content, False, None)
        if not self._armed or self._started:
            self._started = True
            return SpillResult(content, False, None)
        had_held = bool(self._held)
        verdict = self._scan(content)
        self._held.append(content)
        if verdict == _HOLD:
            return SpillResult("", True, None)
        candidate = "".join(self._held)
        self._started = True
        if verdict == _EMIT:
            self._reset_candidate()
            return SpillResult(candidate, had_held, None)
        cut = self._cut
        self._reset_candidate()
        return SpillResult(candidate[cut:], True, candidate[:cut].strip())

    def flush(self) -> SpillResult:
        """Release held text unchanged (never spills) and end the stream."""
        held = "".join(self._held)
        self._armed = False
        self._started = False
        self._reset_candidate()
        return SpillResult(held, bool(held), None)

    def _scan(self, content: str) -> int:
        """Advance the decision over `content`; return _HOLD, _EMIT or _FIRE."""
        for ch in content:
            index = self._length
            self._length += 1
            phase = self._phase
            if phase == _WS:
                if ch.isspace():
                    self._ws_len += 1
                    continue
                if not is_lowercase_letter(ch):
                    return _EMIT
                self._phase = _SCAN
                self._core_len = 1
                self._prev = ch
                continue
            if phase == _REM_WS:
                if ch.isspace():
                    continue
                return _EMIT  # the remainder starts with whitespace: not glued
            self._core_len += 1
            if phase == _SCAN and self._dot_pending:
                self._dot_pending = False
                if not _is_ascii_digit(ch):
                    # The held `.` is a boundary after all; `ch` follows it.
                    if self._ticks % 2:
                        return _EMIT  # inside inline code
                    phase = self._phase = _RUN
            if phase == _SCAN:
                if ch in BOUNDARIES:
                    if ch == "." and _is_ascii_digit(self._prev):
                        self._dot_pending = True
                    elif self._ticks % 2:
                        return _EMIT  # inside inline code
                    else:
                        self._phase = _RUN
                elif ch == "`":
                    self._ticks += 1
                elif ch.isspace():
                    self._fragment_has_ws = True
                self._prev = ch
            else:
                verdict = self._after_run_char(ch, index)
                if verdict is not None:
                    return verdict
            if self._phase in (_SCAN, _RUN) and self._core_len >= HORIZON:
                return _EMIT
        return _HOLD

    def _after_run_char(self, ch: str, index: int) -> int | None:
        """Handle a character that follows the boundary run's start."""
        if ch in BOUNDARIES:
            return None  # the run goes on
        self._cut = index
        if ch.isspace():
            self._phase = _REM_WS
            return None
        if is_answer_start(ch) or self._fragment_has_ws:
            return _FIRE
        return _EMIT
