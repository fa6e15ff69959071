"""Where delivered text goes: the `MessageSink` protocol and the neutral embed shape.

`stream/` never imports discord.py; `bot/edge/sink.py` implements this protocol with
discord.py and tests may implement it over the fake Discord.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol


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
    Only a `Write` with `may_skip` may be refused this way.
    """

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(0.0, retry_after)


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


Stage = Literal["interim", "final", "closing"]


@dataclass(frozen=True, slots=True)
class Write:
    """What one send or edit delivers, told by the caller so the sink need not guess it
    from the content: `interim` text still streaming (the indicator shown: Stop rides on
    it), `final` text of a message that is not the answer's last (a split head, a
    resumed message given its text back: no buttons), or `closing`, the final state of
    the answer's LAST message with the answer's `ending` (its final controls; None, a
    note made without one, leaves the buttons as they are).

    `may_skip` marks an interim edit a newer version will follow: only such a write may
    be refused for budget (`SinkBusy`)."""

    stage: Stage
    ending: Ending | None = None
    may_skip: bool = False

    @classmethod
    def closing(cls, ending: Ending | None) -> Write:
        return cls("closing", ending)


INTERIM = Write("interim")  # streaming text that must go out (a part's first send)
INTERIM_EDIT = Write("interim", may_skip=True)  # streaming text a newer edit will replace
FINAL = Write("final")


class MessageSink(Protocol):
    """One channel's delivery surface, replying to the triggering message; each send and
    edit says what it writes (`Write`)."""

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        """Post a new message; `reply=True` references the triggering message. A message
        posted on its own (a notice) is final text: the default `write`."""

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
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
