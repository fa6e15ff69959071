"""Where delivered text goes: the `MessageSink` protocol and the neutral embed shape.

`stream/` never imports discord.py; `bot/edge/sink.py` implements this protocol with
discord.py and tests may implement it over the fake Discord.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(slots=True, frozen=True)
class SentMessage:
    """A handle to a message the sink created."""

    id: int
    channel_id: int | None = None


@dataclass(slots=True)
class EmbedSpec:
    """A Discord embed without discord.py: title, description (<= 4096), fields, colour."""

    title: str
    description: str = ""
    color: int | None = None
    fields: list[tuple[str, str]] = field(default_factory=list)
    footer: str | None = None


@dataclass(slots=True, frozen=True)
class RateLimitInfo:
    """The last rate-limit headers seen for the channel's message bucket."""

    limit: int | None
    remaining: int | None
    reset_after: float | None  # seconds until the bucket refills


class SinkError(Exception):
    """Delivery failed for a reason the buffer can act on."""


class MessageGone(SinkError):
    """The message to edit no longer exists (deleted: 404): continue in a new message."""


class SinkForbidden(SinkError):
    """The bot may not post here (403)."""


class SinkUnavailable(SinkError):
    """Discord failed (5xx) or the network did; the text is kept for a later attempt."""


class SinkBusy(SinkError):
    """An interim operation was refused because the sink's budget is tight right now.

    Not a failure and not an outage: nothing was sent, and the caller skips this
    operation and tries again after `retry_after` seconds with its newest content.
    Only operations marked with `interim_operation()` may be refused this way.
    """

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(0.0, retry_after)


_INTERIM: contextvars.ContextVar[bool] = contextvars.ContextVar("sink_interim_operation", default=False)


@contextlib.contextmanager
def interim_operation() -> Iterator[None]:
    """Sink calls made inside (by this task) may be skipped: a newer version will follow."""
    token = _INTERIM.set(True)
    try:
        yield
    finally:
        _INTERIM.reset(token)


def is_interim() -> bool:
    """Whether the sink call being made now is an interim one (a sink reads this)."""
    return _INTERIM.get()


@dataclass(frozen=True, slots=True)
class Ending:
    """How an answer ended, in neutral terms: a sink may show controls from it (Discord's
    buttons) without knowing the stream. `finish_reason` is the provider's (`length`: cut
    by the output cap), `reasoning` whether thoughts or think blocks were captured,
    `interrupted` the interrupt's reason (`stop`, `deadline`, ...) when one ended it,
    `sources` how many web pages the answer was grounded on (the sources line shows a few)."""

    finish_reason: str | None
    reasoning: bool
    interrupted: str | None = None
    sources: int = 0


_ENDING: contextvars.ContextVar[Ending | None] = contextvars.ContextVar("sink_answer_ending", default=None)
_CLOSING: contextvars.ContextVar[bool] = contextvars.ContextVar("sink_closing_operation", default=False)


@contextlib.contextmanager
def answer_ending(ending: Ending | None) -> Iterator[None]:
    """The delivery's finishing calls made inside (by this task) know how the answer ended."""
    token = _ENDING.set(ending)
    try:
        yield
    finally:
        _ENDING.reset(token)


def current_ending() -> Ending | None:
    """How the answer ended, while its delivery finishes (None: not known here)."""
    return _ENDING.get()


@contextlib.contextmanager
def closing_operation() -> Iterator[None]:
    """Sink calls made inside deliver the final state of the answer's LAST message: the one
    that may carry the answer's final controls (a split head delivered final is not one)."""
    token = _CLOSING.set(True)
    try:
        yield
    finally:
        _CLOSING.reset(token)


def is_closing() -> bool:
    """Whether the sink call being made now is the closing one of the last message."""
    return _CLOSING.get()


class MessageSink(Protocol):
    """One channel's delivery surface, replying to the triggering message."""

    async def send(self, content: str, *, reply: bool = False) -> SentMessage:
        """Post a new message; `reply=True` references the triggering message."""

    async def edit(self, message: SentMessage, content: str) -> None:
        """Replace the content of a message this sink sent (MessageGone when deleted)."""

    async def delete(self, message: SentMessage) -> None:
        """Remove a message this sink sent (a superseded answer)."""

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        """Post an embed (error notices, thought log)."""

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        """Post an attachment (reasoning too long for an embed)."""

    async def typing(self) -> None:
        """Show the typing indicator (Discord keeps it about 10 seconds)."""

    def rate_limit(self) -> RateLimitInfo | None:
        """The newest rate-limit state known for message edits here, if any."""
