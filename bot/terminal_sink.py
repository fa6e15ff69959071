"""A `MessageSink` that writes an answer to a terminal (`python -m bot ask`).

The generation turn delivers an answer as messages whose edits replace the whole text.
The terminal turn asks for one message of up to `TERMINAL_MESSAGE_LIMIT` characters, so
the answer is never split the way Discord's 2,000 characters split it; what is left is
that a terminal cannot take back what it printed, so this sink prints what each edit adds:

- an interim edit loses what the renderer added for Discord (the streaming indicator,
  the closer of a fence that is still open) before it is compared;
- an edit that extends the text prints the new suffix; any other prints from where it
  differs (the terminal keeps the older characters);
- another message (a notice) starts on a line of its own.

Embeds (the error headline, its detail and tips) go to the error stream as plain text;
a retracted answer (another key or model is tried) gets one line saying so.

Everything printed is the model's or a provider's text, so it goes through
`terminal_safe` first: an answer must not set the window title, clear the screen, move the
cursor or rewrite a line the reader already saw.
"""

from __future__ import annotations

import re
from typing import TextIO

from stream.buffer import STREAMING_INDICATOR
from stream.sink import FINAL, EmbedSpec, RateLimitInfo, SentMessage, Write
from stream.splitter import fence_closer, open_fence

TERMINAL_MESSAGE_LIMIT = 1_000_000  # one message for the whole answer: a terminal needs no split
WITHDRAWN = "[the text above was withdrawn: trying again]"
_TRAILING_FENCE = re.compile(r"\n[ \t]*`{3,}$")
# Terminal control sequences (ECMA-48): CSI (ESC [ or the 8-bit 0x9B) with its parameters;
# OSC, DCS, SOS, PM and APC strings up to their terminator (BEL or ST); other escapes; then
# any C0 or C1 control character left, but the line break and the tab. Hand-written: the
# libraries that strip "ANSI codes" strip colours and leave OSC strings and C1 controls.
# A string's body stops at the next string introducer and every run is possessive, so no
# text makes the match scan the same characters again and again (`\x9dx` a million times).
_CSI = r"(?:\x1b\[|\x9b)[0-?]*+[ -/]*+"
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x90\x98\x9c\x9d\x9e\x9f]*+"
_CONTROL = re.compile(_CSI + r"[@-~]|" + _STRING + r"(?:\x07|\x1b\\|\x9c)|\x1b[ -/]*+[0-~]"
                      r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The start of a control sequence whose end has not arrived yet, at the end of a text.
_UNFINISHED = re.compile(r"(?:" + _CSI + "|" + _STRING + r"\x1b?|\x1b[ -/]*+)\Z")


def terminal_safe(text: str) -> str:
    """`text` without terminal control sequences or control characters (line breaks and tabs
    kept): what a model or a provider wrote is printed, never obeyed by the terminal."""
    return _CONTROL.sub("", text)


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
        self._printed = ""  # the current message's text as far as it was printed
        self._latest = ""  # the current message's latest text, a control sequence it ends in included
        self._line_start = True

    # -- MessageSink --------------------------------------------------------------------

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        """A new message: the answer, or a notice on a line of its own."""
        self._show_held()
        self._newline()
        message = self._new_id()
        self._current, self._printed = message.id, ""
        self._show(_logical(content, write))
        return message

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        """The message's text replaced: print what it adds (see the module docstring)."""
        if message.id == self._current:
            self._show(_logical(content, write))

    async def delete(self, message: SentMessage) -> None:
        """A retry supersedes the answer: a terminal cannot unprint it, so it says so."""
        if message.id != self._current:
            return
        self._newline()
        self._write(WITHDRAWN + "\n")
        self._current = None

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        """The error embed as plain text: title, headline and detail, then the tips."""
        self._newline()
        lines = [embed.title, embed.description]
        for name, value in embed.fields:
            lines.extend((name.strip(), value))
        if embed.footer:
            lines.append(embed.footer)
        self._err.write(terminal_safe("\n".join(line for line in lines if line.strip())) + "\n")
        self._err.flush()
        return self._new_id()

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        """Attachments are for Discord (a long thought log); the terminal names the file only."""
        if embed is not None:
            await self.send_embed(embed)
        self._err.write(terminal_safe(f"[{filename}: {len(data)} bytes not shown]") + "\n")
        self._err.flush()
        return self._new_id()

    async def typing(self) -> None:
        """Nothing to show: the answer prints as soon as it arrives."""

    def rate_limit(self) -> RateLimitInfo | None:
        return None

    @property
    def printed_anything(self) -> bool:
        """Whether the turn has shown anything yet (text, a notice or an error)."""
        return self._next_id > 1

    def close(self) -> None:
        """The answer is over: print what was held back, end the line."""
        self._show_held()
        self._newline()

    # -- text ---------------------------------------------------------------------------

    def _new_id(self) -> SentMessage:
        message = SentMessage(self._next_id)
        self._next_id += 1
        return message

    def _show(self, text: str) -> None:
        """Print what `text` adds to what was printed of the current message (a text that
        is only shorter than that adds nothing: the printed one stays the reference).

        Control sequences are left out (`terminal_safe`); one the text ends in before its
        end has arrived is held back, so its parameters never print as text."""
        self._latest = text
        self._print_new(terminal_safe(_UNFINISHED.sub("", text)))

    def _show_held(self) -> None:
        """The last text whole: no later edit will finish a sequence it ends in."""
        if self._current is not None:
            self._print_new(terminal_safe(self._latest))

    def _print_new(self, text: str) -> None:
        shared = _common_prefix(self._printed, text)
        if shared < len(text):
            self._write(text[shared:])
            self._printed = text

    def _newline(self) -> None:
        if not self._line_start:
            self._write("\n")

    def _write(self, text: str) -> None:
        text = terminal_safe(text)
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._line_start = text.endswith("\n")


def _logical(content: str, write: Write) -> str:
    """A message's text without what the renderer added to an interim version: the
    indicator, and the closer of a fence still open (the code goes on)."""
    if write.stage != "interim":
        return content
    text = content.removesuffix(STREAMING_INDICATOR)
    match = _TRAILING_FENCE.search(text)
    if match is None:
        return text
    fence = open_fence(text[: match.start()])
    closes_open_code = fence is not None and fence_closer(fence) == text[match.start():]
    return text[: match.start()] if closes_open_code else text
