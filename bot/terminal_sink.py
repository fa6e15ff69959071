"""A `MessageSink` that writes an answer to a terminal (`python -m bot ask`).

The generation turn delivers an answer as Discord messages: a first send, then edits
that replace the whole text (with a streaming indicator and, inside code, a provisional
fence closer), split into several messages past 2,000 characters. A terminal cannot
take back what it printed, so this sink prints only what each edit adds:

- an interim edit loses what the renderer added for Discord (the indicator, the closer
  of a fence that is still open) before it is compared;
- an edit that extends the message prints the new suffix;
- a message finished shorter than what was printed (the split fell before the end of
  the streamed view) keeps the surplus as an overhang, which the next message, the
  continuation, begins with: that much of it is not printed again;
- a fence closed at the end of a finished message and reopened at the start of the
  next (the split fell inside code) is printed as one uninterrupted block;
- any other edit prints from where it differs (the terminal keeps the older characters).

Embeds (the error headline, its detail and tips) go to the error stream as plain text;
a retracted answer (another key or model is tried) gets one line saying so.
"""

from __future__ import annotations

import re
from typing import TextIO

from stream.buffer import STREAMING_INDICATOR
from stream.sink import EmbedSpec, RateLimitInfo, SentMessage
from stream.splitter import fence_closer, fence_reopener, open_fence

WITHDRAWN = "[the text above was withdrawn: trying again]"
_TRAILING_FENCE = re.compile(r"\n[ \t]*`{3,}$")


def _closer_at_end(text: str, opened: str = "") -> tuple[str, tuple[str, str]] | None:
    """The fence closer `text` ends with and the fence it closes, when it closes one
    (`opened`: a fence line left out before `text`)."""
    match = _TRAILING_FENCE.search(text)
    if match is None:
        return None
    fence = open_fence(opened + text[: match.start()])
    if fence is None or fence_closer(fence) != text[match.start():]:
        return None
    return text[match.start():], fence


def _common_prefix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    i = 0
    while i < size and a[i] == b[i]:
        i += 1
    return i


class TerminalSink:
    """Prints one answer progressively to `out`; embeds to `err` (see the module docstring)."""

    def __init__(self, out: TextIO, err: TextIO | None = None) -> None:
        self._out = out
        self._err = err if err is not None else out
        self._next_id = 1
        self._current: int | None = None
        self._seen = ""  # the current message's text, as far as it was accounted for
        self._held = ""  # the fence closer `_seen` ends with, not printed yet (a continuation cancels it)
        self._held_fence: tuple[str, str] | None = None
        self._reopener = ""  # the fence line the current message begins with that was left out
        self._overhang = ""  # printed past where the last message was finished
        self._skip = ""  # what the current message begins with that was printed already
        self._line_start = True

    # -- MessageSink --------------------------------------------------------------------

    async def send(self, content: str, *, reply: bool = False) -> SentMessage:
        """A new message: the continuation of the last one, or a line of its own (a notice)."""
        text = _logical(content)
        fence, self._held_fence = self._held_fence, None
        self._reopener = ""
        if self._current is not None:
            if fence is not None and text.startswith(fence_reopener(fence)):
                self._reopener = fence_reopener(fence)  # the same code block goes on
                text = text[len(self._reopener):]
                self._held = ""
            else:
                self._flush_held()
            self._skip = self._match_overhang(text)
            if not self._skip:
                self._newline()
        self._overhang = ""
        message = self._new_id()
        self._current, self._seen = message.id, ""
        self._apply(text, final=not content.endswith(STREAMING_INDICATOR))
        return message

    async def edit(self, message: SentMessage, content: str) -> None:
        """The message's text replaced: print what it adds (see the module docstring)."""
        if message.id != self._current:
            return  # an older message: what it showed is printed already
        text = _logical(content)
        if self._reopener and text.startswith(self._reopener):
            text = text[len(self._reopener):]
        self._apply(text, final=not content.endswith(STREAMING_INDICATOR))

    async def delete(self, message: SentMessage) -> None:
        """A retry supersedes the answer: a terminal cannot unprint it, so it says so."""
        if message.id != self._current:
            return
        self._held, self._held_fence, self._overhang, self._skip = "", None, "", ""
        self._newline()
        self._write(WITHDRAWN + "\n")
        self._current = None

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        """The error embed as plain text: title, headline and detail, then the tips."""
        self._flush_held()
        self._newline()
        lines = [embed.title, embed.description]
        for name, value in embed.fields:
            lines.extend((name.strip(), value))
        if embed.footer:
            lines.append(embed.footer)
        self._err.write("\n".join(line for line in lines if line.strip()) + "\n")
        self._err.flush()
        return self._new_id()

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        """Attachments are for Discord (a long thought log); the terminal names the file only."""
        if embed is not None:
            await self.send_embed(embed)
        self._err.write(f"[{filename}: {len(data)} bytes not shown]\n")
        self._err.flush()
        return self._new_id()

    async def typing(self) -> None:
        """Nothing to show: the answer prints as soon as it arrives."""

    def rate_limit(self) -> RateLimitInfo | None:
        return None

    def close(self) -> None:
        """The answer is over: print a closer still held and end the line."""
        self._flush_held()
        self._newline()

    # -- text ---------------------------------------------------------------------------

    def _new_id(self) -> SentMessage:
        message = SentMessage(self._next_id)
        self._next_id += 1
        return message

    def _apply(self, text: str, *, final: bool) -> None:
        """Account for the current message's new text; print what was not printed yet."""
        hold = _closer_at_end(text, self._reopener) if final else None
        seen = self._seen
        if text.startswith(seen):
            self._print_held(self._held + text[len(seen):], hold)
            self._seen = text
            return
        printed = seen[: len(seen) - len(self._held)]
        body = text[: len(text) - len(hold[0])] if hold is not None else text
        if printed.startswith(body):
            # Finished shorter than its streamed view (a split): the next message goes on
            # from here, and begins with what was printed past it.
            self._overhang = printed[len(body):]
            self._held, self._held_fence = hold if hold is not None else ("", None)
            self._seen = text
            return
        # Neither: print from where it differs (the terminal keeps the older characters).
        self._print_held(text[_common_prefix(printed, text):], hold)
        self._seen = text

    def _print_held(self, text: str, hold: tuple[str, tuple[str, str]] | None) -> None:
        """Print `text` except a closing fence it ends with, which is held for now."""
        self._held, self._held_fence = "", None
        if hold is not None and text.endswith(hold[0]):
            text = text[: len(text) - len(hold[0])]
            self._held, self._held_fence = hold
        self._print(text)

    def _match_overhang(self, text: str) -> str:
        """The part of the overhang the new message begins with (printed already), if any.

        The overhang starts with the whitespace the split dropped; the continuation may
        keep some of it (blank lines inside code) or none."""
        overhang = self._overhang
        lead = len(overhang) - len(overhang.lstrip())
        for start in range(lead + 1):
            candidate = overhang[start:]
            if candidate and (text.startswith(candidate) or candidate.startswith(text)):
                return candidate
        return ""

    def _print(self, text: str) -> None:
        """Write `text`, leaving out what the current message repeats of the overhang."""
        if self._skip:
            shared = _common_prefix(self._skip, text)
            if shared == len(text):
                self._skip = self._skip[shared:]
                return
            text, self._skip = text[shared:], ""
        self._write(text)

    def _flush_held(self) -> None:
        self._write(self._held)
        self._held, self._held_fence = "", None

    def _newline(self) -> None:
        if not self._line_start:
            self._write("\n")

    def _write(self, text: str) -> None:
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._line_start = text.endswith("\n")


def _logical(content: str) -> str:
    """A message's text without what the renderer added to an interim version."""
    if not content.endswith(STREAMING_INDICATOR):
        return content
    text = content[: -len(STREAMING_INDICATOR)]
    closer = _closer_at_end(text)
    return text[: -len(closer[0])] if closer is not None else text
