"""An answer's text as its messages will show it: what to show, where to split, how it reads
while streaming.

Kept apart from the Discord side (`stream/publisher.py`) because it is pure: chunks go in,
strings come out, and nothing here waits. Think and details blocks are taken out as they
arrive (`BlockCapture`), the text is split at the splitter's boundary once the open
message outgrows the limit (with a look-ahead while streaming, so a split is not made on
a boundary the next chunk would move), and a fence still open at a split is reopened in
the next message. A `Resume` starts from an existing message's text, so new text is
appended to it and split exactly as one stream of both would be.
"""

from __future__ import annotations

from dataclasses import dataclass

from stream.capture import BlockCapture, CapturedBlock
from stream.sink import SentMessage
from stream.splitter import LOOKAHEAD, fence_closer, open_fence, split_message


@dataclass(frozen=True, slots=True)
class Resume:
    """An answer's existing last message and the text it shows: a delivery made with it
    appends to that message (Continue) instead of posting a first one, and splits as one
    delivery of `text` + the new text would. The message counts among the delivery's
    `max_messages`; `retract()` gives it `text` back instead of deleting it."""

    message: SentMessage
    text: str


@dataclass(frozen=True, slots=True)
class Cut:
    """Where the open message ends: its final text (`head`), where the next message's text
    starts in the visible text, the fence reopener it begins with, and whether any text
    follows the cut yet."""

    head: str
    start: int
    reopen: str
    rest_empty: bool


class AnswerText:
    """The visible text of one answer and the open message's share of it.

    Appending is cheap (a list append, joined only when the text is read), because it runs
    once per streamed chunk and the text is read only when an edit is due."""

    def __init__(self, *, limit: int, indicator: str, capture_blocks: bool = True,
                 resume: Resume | None = None) -> None:
        self._limit = limit
        self._indicator = indicator
        self._capture = BlockCapture() if capture_blocks else None
        self._parts: list[str] = []
        self._length = 0
        self._start = 0  # where the open message's text starts in the visible text
        self._prefix = ""  # fence reopener shown before that text
        self._resumed = 0  # characters of the visible text the resumed message showed
        if resume is not None and resume.text:
            self._add(resume.text)
            self._resumed = len(resume.text)

    @property
    def full(self) -> str:
        """Everything visible: the resumed message's text, then this stream's."""
        parts = self._parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    @property
    def new(self) -> str:
        """This stream's visible text only (without what a resumed message showed)."""
        visible = self.full
        return visible[self._resumed :] if self._resumed else visible

    @property
    def blocks(self) -> list[CapturedBlock]:
        return list(self._capture.blocks) if self._capture else []

    def append(self, text: str) -> bool:
        """Take a streamed chunk; True when the visible text grew (a block may swallow it)."""
        if self._capture is not None:
            text = self._capture.feed(text)
        if not text:
            return False
        self._add(text)
        return True

    def close_blocks(self) -> None:
        """The stream ended: an unterminated block's text is shown after all."""
        if self._capture is not None:
            tail = self._capture.flush()
            if tail:
                self._add(tail)

    def due_cut(self, *, final: bool) -> Cut | None:
        """The open message's end when it has outgrown the limit (sizes decide before
        anything is rendered); while streaming only once the look-ahead is there too."""
        size = len(self._prefix) + self._length - self._start
        if size <= self._limit or not (final or size >= self._limit + LOOKAHEAD):
            return None
        split = split_message(self.open_content(), self._limit)
        if split is None:  # pragma: no cover - size > limit guarantees a split
            return None
        start = self._start + max(0, split.cut - len(self._prefix))
        return Cut(split.head.strip(), start, split.reopen, not self.full[start:].strip())

    def open_next(self, cut: Cut) -> None:
        """The open message ended at `cut`: the next one starts after it."""
        self._start, self._prefix = cut.start, cut.reopen

    def keep_until(self, cut: Cut) -> None:
        """No message may follow `cut`: the answer is what was shown before it."""
        self._start = cut.start
        kept = self.full[: cut.start]
        self._parts[:] = [kept] if kept else []
        self._length = len(kept)

    def open_content(self) -> str:
        return self._prefix + self.full[self._start :]

    def render(self, *, final: bool) -> str:
        """The open message's final text, or its streaming view: an open fence closed so
        the code renders as code while it grows, then the indicator."""
        content = self.open_content()
        if final:
            return content.strip()
        shown = content.rstrip()
        if not shown.strip():
            return ""
        fence = open_fence(shown)
        closer = fence_closer(fence) if fence is not None else ""
        room = self._limit - len(self._indicator) - len(closer)
        return shown[:room].strip() + closer + self._indicator

    def _add(self, text: str) -> None:
        self._parts.append(text)
        self._length += len(text)
