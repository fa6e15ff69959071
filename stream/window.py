"""A sliding log of operations: the one rate-window idea both Discord budgets share.

Discord counts requests in windows it does not show us. Keeping the times of our own
operations and treating any `span` seconds (the window plus a margin for network
jitter) as one window is stricter than any fixed window Discord might use, so staying
within `capacity` per span here stays within Discord's limit there. An operation counts
from when it came back (the caller adds that time), because Discord's window for it
opens when it arrives, which may be later than when it was asked for.

Used by a channel's message budget (`stream.pacing.EditBudget`: 5 per 5 s per channel)
and by the bot-wide REST budget (`bot.edge.budget.GlobalBudget`: 50 per second). Pure
arithmetic on the times it is given: no clock is read here.
"""

from __future__ import annotations

from bisect import insort
from collections import deque


class SlidingLog:
    """The times operations came back, oldest first, within the last `span` seconds."""

    __slots__ = ("span", "times")

    def __init__(self, span: float) -> None:
        self.span = span
        self.times: deque[float] = deque()

    def prune(self, now: float) -> deque[float]:
        """Forget what left the window by `now`; the times still in it."""
        times = self.times
        while times and times[0] <= now - self.span:
            times.popleft()
        return times

    def free_in(self, now: float, capacity: int, on_the_way: int = 0) -> float | None:
        """Seconds until one more operation fits `capacity` (0: now). `on_the_way`
        operations fill slots without a time yet: when only their return can free one,
        None (the caller decides how soon to look again)."""
        times = self.prune(now)
        used = len(times) + on_the_way
        if used < capacity:
            return 0.0
        leaving = used - capacity  # the index of the time that must leave the window first
        if leaving >= len(times):
            return None
        return max(0.0, times[leaving] + self.span - now)

    def add(self, at: float) -> None:
        """An operation counts from `at` (kept in order: returns may come back out of order)."""
        if not self.times or at >= self.times[-1]:
            self.times.append(at)
        else:
            insort(self.times, at)

    def discard(self, at: float) -> bool:
        """Stop counting the operation added at `at`; False when it already left the window."""
        try:
            self.times.remove(at)
        except ValueError:
            return False
        return True

    def newest(self) -> float | None:
        return self.times[-1] if self.times else None

    def __len__(self) -> int:
        return len(self.times)
