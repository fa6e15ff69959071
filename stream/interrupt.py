"""One answer's interrupt: a single object that says "stop now" and why.

A member's `/stop`, the same member asking something new, the bot shutting down and an
answer running past its deadline all end an answer the same way: what was said stays,
the streaming indicator goes. The first reason wins; later fires change nothing, so the
answer's ending is decided once.
"""

from __future__ import annotations

import asyncio
from typing import Literal

InterruptReason = Literal["stop", "follow_up", "shutdown", "deadline"]


class Interrupt:
    """Fired at most once, with a reason; awaitable, and cheap to poll per chunk."""

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._reason: InterruptReason | None = None

    def fire(self, reason: InterruptReason) -> bool:
        """Interrupt with `reason`; False when it had already fired."""
        if self._reason is not None:
            return False
        self._reason = reason
        self._event.set()
        return True

    def is_set(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> InterruptReason | None:
        return self._reason

    async def wait(self) -> InterruptReason:
        """Wait until fired; returns the reason."""
        await self._event.wait()
        assert self._reason is not None
        return self._reason

    def __repr__(self) -> str:
        return f"Interrupt(reason={self._reason!r})"
