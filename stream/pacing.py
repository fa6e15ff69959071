"""How soon the next message operation may go out in a channel without a 429.

Discord allows about 5 message edits per 5 seconds per channel. The budget keeps a
log of our own operations (`stream.window.SlidingLog`, the window the bot-wide REST
budget keeps too), spreads ordinary edits evenly, and keeps `reserve` slots that only
mandatory operations (a message's final edit, the first reply) may use, so the final
edit is never starved. When the sink reports rate-limit headers, they
tighten the estimate: an exhausted bucket waits for its reset.

Pure arithmetic on the times it is given: no clock is read here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stream.sink import RateLimitInfo
from stream.window import SlidingLog

DEFAULT_LIMIT = 5
DEFAULT_WINDOW = 5.0
DEFAULT_RESERVE = 1
# Seconds added to every window: requests leave in order but may arrive closer together.
SAFETY_MARGIN = 0.25


@dataclass(slots=True)
class EditBudget:
    """One channel's budget of message operations (sends and edits share it).

    An operation counts from when it came back (`settle`), not from when it was asked
    (`start`): a request may wait before it leaves (for the global budget, behind others)
    and Discord's window opens when it arrives. Until it is back it fills a slot whatever
    its age, so requests held together cannot land together."""

    limit: int = DEFAULT_LIMIT
    window: float = DEFAULT_WINDOW
    reserve: int = DEFAULT_RESERVE
    margin: float = SAFETY_MARGIN
    _log: SlidingLog = field(init=False)  # when settled operations came back
    _on_the_way: int = 0
    _last_start: float | None = None
    _header_remaining: int | None = None
    _header_reset_at: float | None = None

    def __post_init__(self) -> None:
        self._log = SlidingLog(self.window + self.margin)

    def delay(self, now: float, *, mandatory: bool = False) -> float:
        """Seconds to wait before the next operation (0 when it may go now)."""
        log, span = self._log, self._log.span
        allowed = self.limit if mandatory else max(1, self.limit - self.reserve)
        wait = log.free_in(now, allowed, self._on_the_way)
        if wait is None:  # operations on their way fill it: look again once one may have come back
            wait = self.margin
        used = len(log) + self._on_the_way
        newest = log.newest()
        last = max(newest if newest is not None else -span,
                   self._last_start if self._last_start is not None else -span)
        if not mandatory and used:
            # Spread ordinary edits evenly instead of bursting the budget.
            wait = max(wait, last + span / allowed - now)
        reset_at = self._header_reset_at
        if reset_at is not None and self._header_remaining is not None:
            if now >= reset_at:
                self._header_reset_at = self._header_remaining = None
            else:
                keep = 0 if mandatory else self.reserve
                if self._header_remaining <= keep:
                    wait = max(wait, reset_at + self.margin - now)
        return max(0.0, wait)

    def start(self, now: float) -> None:
        """An operation is asked for now; it fills a slot until it is settled or forgotten."""
        self._on_the_way += 1
        self._last_start = now
        if self._header_remaining is not None:
            self._header_remaining -= 1

    def settle(self, now: float) -> None:
        """An operation started earlier came back now (it arrived no later): it counts from now."""
        self._on_the_way = max(0, self._on_the_way - 1)
        self._log.add(now)

    def forget(self) -> None:
        """An operation started earlier never left (a skipped interim edit): free its slot."""
        self._on_the_way = max(0, self._on_the_way - 1)
        if self._header_remaining is not None:
            self._header_remaining += 1

    def record(self, now: float) -> None:
        """An operation went out and came back at once (`start` and `settle` together)."""
        self.start(now)
        self.settle(now)

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
