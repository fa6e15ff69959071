"""How soon the next message operation may go out in a channel without a 429.

Discord allows about 5 message edits per 5 seconds per channel. The budget keeps a
log of our own operations (a sliding window, stricter than Discord's fixed window, with
a safety margin for network jitter), spreads ordinary edits evenly, and keeps `reserve`
slots that only mandatory operations (a message's final edit, the first reply) may use,
so the final edit is never starved. When the sink reports rate-limit headers, they
tighten the estimate: an exhausted bucket waits for its reset.

Pure arithmetic on the times it is given: no clock is read here.
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from dataclasses import dataclass, field

from stream.sink import RateLimitInfo

DEFAULT_LIMIT = 5
DEFAULT_WINDOW = 5.0
DEFAULT_RESERVE = 1
# Seconds added to every window: requests leave in order but may arrive closer together.
SAFETY_MARGIN = 0.25


@dataclass(slots=True)
class EditBudget:
    """One channel's budget of message operations (sends and edits share it)."""

    limit: int = DEFAULT_LIMIT
    window: float = DEFAULT_WINDOW
    reserve: int = DEFAULT_RESERVE
    margin: float = SAFETY_MARGIN
    _times: deque[float] = field(default_factory=deque)
    _header_remaining: int | None = None
    _header_reset_at: float | None = None

    def delay(self, now: float, *, mandatory: bool = False) -> float:
        """Seconds to wait before the next operation (0 when it may go now)."""
        span = self.window + self.margin
        times = self._times
        while times and times[0] <= now - span:
            times.popleft()
        allowed = self.limit if mandatory else max(1, self.limit - self.reserve)
        wait = 0.0
        if len(times) >= allowed:
            # The oldest operation that must leave the window before we may go.
            wait = times[len(times) - allowed] + span - now
        if not mandatory and times:
            # Spread ordinary edits evenly instead of bursting the budget.
            wait = max(wait, times[-1] + span / allowed - now)
        reset_at = self._header_reset_at
        if reset_at is not None and self._header_remaining is not None:
            if now >= reset_at:
                self._header_reset_at = self._header_remaining = None
            else:
                keep = 0 if mandatory else self.reserve
                if self._header_remaining <= keep:
                    wait = max(wait, reset_at + self.margin - now)
        return max(0.0, wait)

    def record(self, now: float) -> None:
        """An operation leaves now."""
        self._times.append(now)
        if self._header_remaining is not None:
            self._header_remaining -= 1

    def forget(self, at: float) -> None:
        """The operation recorded at `at` never left (a skipped interim edit): free its slot."""
        try:
            self._times.remove(at)
        except ValueError:
            return  # already out of the window
        if self._header_remaining is not None:
            self._header_remaining += 1

    def settle(self, at: float, now: float) -> None:
        """The operation recorded at `at` came back at `now`: it counts from then.

        A request may wait before it leaves (for the global budget, behind others), and
        Discord's window opens when it arrives; counted from when it was asked, our window
        would close before Discord's. Its return is never earlier than its arrival."""
        try:
            self._times.remove(at)
        except ValueError:
            return  # already out of the window
        insort(self._times, now)

    def observe(self, info: RateLimitInfo | None, now: float) -> None:
        """Fold in the headers of the response that just arrived."""
        if info is None:
            return
        if info.limit is not None and info.limit > 0:
            self.limit = info.limit
        if info.remaining is not None and info.reset_after is not None:
            self._header_remaining = info.remaining
            self._header_reset_at = now + info.reset_after


class ChannelBudgets:
    """Budgets by channel id, shared by every delivery into the same channel.

    The bot keeps one instance: two replies streaming in one channel draw on one budget.
    """

    __slots__ = ("_budgets", "_factory_args")

    def __init__(self, **budget_args: float) -> None:
        self._budgets: dict[int | None, EditBudget] = {}
        self._factory_args = budget_args

    def for_channel(self, channel_id: int | None) -> EditBudget:
        budget = self._budgets.get(channel_id)
        if budget is None:
            budget = self._budgets[channel_id] = EditBudget(**self._factory_args)  # type: ignore[arg-type]
        return budget
