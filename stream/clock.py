"""Time as an injected dependency, so delivery can be tested on a virtual clock."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """What pacing needs from time: a monotonic reading and a way to wait."""

    def now(self) -> float:
        """Seconds on a monotonic scale."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` on this clock."""


class MonotonicClock:
    """The real clock: `time.monotonic` and `asyncio.sleep`."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))
