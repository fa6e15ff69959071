"""A listen channel's minimum gap between answers.

In a channel where the bot answers every message, a lively conversation would otherwise
get an answer per message. Each answer there waits until the channel's previous answer
started at least `gap` seconds ago; answers wait one at a time per channel (first come,
first served), and a member's messages that arrive meanwhile join their waiting question
(`bot.question.flow`). An interrupted waiter leaves without taking the slot.
"""

from __future__ import annotations

import asyncio
import contextlib

from stream.interrupt import Interrupt


class ChannelGaps:
    """When each listen channel's last answer started, and one waiter per channel at a time."""

    def __init__(self) -> None:
        self._started: dict[int, float] = {}  # channel id -> loop time of its last answer's start
        self._locks: dict[int, asyncio.Lock] = {}

    async def wait(self, channel_id: int, gap: float, interrupt: Interrupt) -> bool:
        """Wait for the channel's gap; False when the answer was interrupted meanwhile."""
        # One lock and one time per channel that ever listened (at most 10 per server).
        async with self._locks.setdefault(channel_id, asyncio.Lock()):
            loop = asyncio.get_running_loop()
            delay = self._started.get(channel_id, -gap) + gap - loop.time()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(interrupt.wait(), delay)
            if interrupt.is_set():
                return False
            self._started[channel_id] = loop.time()
            return True
