"""A virtual clock for the stream tests: time jumps from one sleeper to the next.

Delivery paces itself with `clock.now()` and `clock.sleep()`; on this clock a test of
minutes of pacing runs in milliseconds and always interleaves the same way.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


class VirtualClock:
    """Time that advances only when every task is waiting on it."""

    def __init__(self, start: float = 0.0, settle: int = 40) -> None:
        self._now = start
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._settle = settle

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._heap, (self._now + max(0.0, seconds), self._seq, future))
        await future

    async def run(self, awaitable: Awaitable[T], *, max_time: float = 100_000.0) -> T:
        """Run `awaitable` to completion, jumping time from one sleeper to the next."""
        task = asyncio.ensure_future(awaitable)
        idle_rounds = 0
        while True:
            for _ in range(self._settle):
                await asyncio.sleep(0)
            if task.done():
                return task.result()
            while self._heap and self._heap[0][2].done():
                heapq.heappop(self._heap)
            if not self._heap:
                idle_rounds += 1
                if idle_rounds > 50:
                    task.cancel()
                    raise RuntimeError("deadlock: the task waits on something other than the clock")
                continue
            idle_rounds = 0
            wake, _, future = heapq.heappop(self._heap)
            if wake > max_time:
                task.cancel()
                raise RuntimeError(f"virtual time ran past {max_time}s")
            self._now = max(self._now, wake)
            future.set_result(None)
