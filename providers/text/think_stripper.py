"""Reroute think blocks leaked into visible content to reasoning.

Some backends stream their reasoning inside `<think>…</think>` in `delta.content`, and
the tags may be cut by any chunk boundary. The stripper keeps only a small state between
calls: whether a block is open, the text held outside a block (which a later stray closer
may still turn into reasoning), and a trailing tag fragment of at most 64 characters.
Each call scans only the new text plus that fragment, so the work is linear in the input.
"""

from __future__ import annotations

from dataclasses import dataclass

from providers.text.reasoning_tags import (
    THINK_CLOSE_RE,
    THINK_TAG_RE,
    find_trailing_tag_prefix,
)


@dataclass(slots=True)
class StripResult:
    """What one call produced: text to show, reasoning captured, and whether it differed."""

    visible_text: str
    thought_text: str
    changed: bool


class ThinkBlockContentStripper:
    """Streaming splitter of visible text and `<think>` reasoning."""

    __slots__ = ("capture_thoughts", "_in_block", "_held", "_fragment")

    def __init__(self, capture_thoughts: bool = True) -> None:
        self.capture_thoughts = capture_thoughts
        self._in_block = False
        # Outside a block: not-yet-emitted text before the fragment (kept as pieces so a
        # long hold is never re-copied). Inside a block this is always empty.
        self._held: list[str] = []
        # A trailing tag fragment, rescanned together with the next input.
        self._fragment = ""

    def reset(self) -> None:
        """Return to the initial state, forgetting anything held."""
        self._in_block = False
        self._held = []
        self._fragment = ""

    def feed(self, text: str) -> StripResult:
        """Split one content delta into visible text and reasoning."""
        if not text:
            return StripResult("", "", False)
        if "<" not in text and not (self._in_block or self._held or self._fragment):
            return StripResult(text, "", False)  # no tag can start here: most chunks, unscanned
        held_before = bool(self._held) or bool(self._fragment)
        work = self._fragment + text
        self._fragment = ""
        visible: list[str] = []
        thought: list[str] = []
        saw_reasoning = False
        pos = 0
        while True:
            if self._in_block:
                match = THINK_CLOSE_RE.search(work, pos)
                if match is None:
                    break
                thought.append(work[pos : match.start()])
                saw_reasoning = True
                self._in_block = False
                pos = match.end()
                continue
            match = THINK_TAG_RE.search(work, pos)
            if match is None:
                break
            before = work[pos : match.start()]
            if match.group().startswith("</"):
                # A stray closer turns everything not yet emitted into reasoning.
                thought.extend(self._held)
                thought.append(before)
            else:
                visible.extend(self._held)
                visible.append(before)
                self._in_block = True
            self._held = []
            saw_reasoning = True
            pos = match.end()
        rest = work[pos:]
        fragment = find_trailing_tag_prefix(rest)
        if self._in_block:
            if fragment is not None and fragment.kind == "close":
                thought.append(rest[: fragment.index])
                self._fragment = rest[fragment.index :]
            else:
                thought.append(rest)
            if rest:
                saw_reasoning = True
        elif fragment is not None and fragment.kind == "close":
            # This may still precede a stray closer; hold all of it.
            self._held.append(rest[: fragment.index])
            self._fragment = rest[fragment.index :]
        else:
            cut = len(rest) if fragment is None else fragment.index
            visible.extend(self._held)
            visible.append(rest[:cut])
            self._held = []
            self._fragment = rest[cut:]
        return self._result(visible, thought, text, saw_reasoning, held_before)

    def flush(self) -> StripResult:
        """Release what is held at the end of the stream and reset."""
        visible: list[str] = []
        thought: list[str] = []
        if self._in_block:
            thought.append(self._fragment)
        else:
            visible.extend(self._held)
            visible.append(self._fragment)
        saw_reasoning = self._in_block and bool(self._fragment)
        self.reset()
        return self._result(visible, thought, "", saw_reasoning, False)

    def _result(
        self,
        visible: list[str],
        thought: list[str],
        text: str,
        saw_reasoning: bool,
        held_before: bool,
    ) -> StripResult:
        visible_text = "".join(visible)
        thought_text = "".join(thought) if self.capture_thoughts else ""
        holding = bool(self._held) or bool(self._fragment)
        changed = visible_text != text or saw_reasoning or holding or held_before
        return StripResult(visible_text, thought_text, changed)
