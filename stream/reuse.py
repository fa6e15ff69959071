"""Regenerate into the old answer's messages: a `MessageSink` that edits instead of posting.

A regenerated answer replaces the old one where it stands. Posting new messages and
deleting the old ones would cost a request per part and move the answer to the bottom
of the channel; instead each `send` of the new delivery edits the next old part that
was not reused yet (a Discord edit, like the one the delivery would make next anyway),
and only once every old part holds new text are new messages posted. What the new
answer does not need (`leftover`) is deleted at the end (`remove_leftover`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from stream.sink import (
    FINAL,
    EmbedSpec,
    MessageGone,
    MessageSink,
    RateLimitInfo,
    SentMessage,
    Write,
)

log = logging.getLogger(__name__)


class ReusingSink:
    """`inner`, but a `send` edits the next old part of `parts` (in order) and returns it.

    An old part deleted meanwhile (`MessageGone`) is skipped for the next one. Every other
    call passes through, so the delivery's own edits, markers and budgets are unchanged.
    """

    def __init__(self, inner: MessageSink, parts: Sequence[SentMessage]) -> None:
        self._inner = inner
        self._parts = list(parts)
        self._next = 0  # the first old part not reused yet

    @property
    def inner(self) -> MessageSink:
        return self._inner

    def leftover(self) -> list[SentMessage]:
        """Old parts never reused (the new answer is shorter): delete them once it ended."""
        return self._parts[self._next :]

    async def remove_leftover(self) -> None:
        """Delete the old parts the new answer did not need; one already gone is fine.

        They are forgotten first, so a later `send` posts a new message instead."""
        surplus, self._next = self.leftover(), len(self._parts)
        for part in surplus:
            try:
                await self._inner.delete(part)
            except MessageGone:
                pass
            except Exception:  # noqa: BLE001 - keep deleting the others
                log.warning("could not delete a surplus part of a regenerated answer", exc_info=True)

    # -- MessageSink ---------------------------------------------------------------------

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        while self._next < len(self._parts):
            part = self._parts[self._next]
            self._next += 1
            try:
                await self._inner.edit(part, content, write=write)
            except MessageGone:
                continue  # deleted meanwhile: the next old part, or a new message
            return part
        return await self._inner.send(content, reply=reply, write=write)

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        await self._inner.edit(message, content, write=write)

    async def delete(self, message: SentMessage) -> None:
        await self._inner.delete(message)

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        return await self._inner.send_embed(embed, reply=reply)

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        return await self._inner.send_file(filename, data, embed=embed)

    async def typing(self) -> None:
        await self._inner.typing()

    def rate_limit(self) -> RateLimitInfo | None:
        return self._inner.rate_limit()
