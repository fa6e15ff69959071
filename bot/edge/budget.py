"""Discord's global budget: at most N REST requests per second for the whole bot token.

Discord answers a bot that sends more than 50 requests per second across all routes
(interaction callbacks and their webhook follow-ups aside) with global 429s that stall
every request. This module is the process's share of that budget, with priorities:

- `URGENT`: an answer's first message, its final edits, deletes of a superseded answer,
  error notices: they wait for budget, first in line, and are never dropped.
- `ROUTINE`: everything else (history fetches, typing, thought-log posts, refusals,
  command sync): they wait for budget behind the urgent ones.
- `INTERIM`: an interim edit of a streaming answer. It never queues: when a slot is not
  free right now (or others are waiting, or the slots kept for urgent work are all that
  is left) it is refused with `BudgetBusy` and a hint of when to try again; the delivery
  edits later with the newest text instead of sending a stale one late.

The window is a sliding log of our own departures (`stream.window.SlidingLog`, the
window each channel's budget keeps too), one second plus a safety margin (requests
leave in order but may arrive closer together), so any one-second window Discord might
count holds at most the budget. A request counts from when it was let go
and again, once it is back (`settle`), from its return: under load it may leave the
process late, and its slot must not free before Discord's count of it ends. A token
bucket would let a full bucket and its refill land in the same second.

Behind a shared REST proxy (`DISCORD_REST_PROXY`, nirn-proxy and the like: it holds the
token's hard global limit for every process and queues what is over it) a process keeps
the same priorities as a soft limit, `ProxyBudget`: up to the whole rate, not a share,
for all but interim edits; those stay within the process's share and are refused while
`ProxyPressure` sees the proxy queueing our requests.

Why not a library: aiolimiter (a leaky bucket) has no priorities, no "refuse instead of
wait" for one class, and reads the loop's clock, so it cannot run on the virtual clock
the tests use; `limits` is a storage-backed counter with no waiting at all. The logic
here is small and pure timing on an injected `Clock`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import heapq
import itertools
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

from bot.edge.proxy_pressure import MAX_HINT, ProxyPressure
from stream.clock import Clock, MonotonicClock
from stream.window import SlidingLog

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger(__name__)

DISCORD_GLOBAL_LIMIT = 50  # requests per second per bot token, Discord's default
WINDOW_SECONDS = 1.0
SAFETY_MARGIN = 0.1  # seconds added to the window for network jitter
URGENT_SHARE = 0.2  # of the window's slots, kept free of interim edits for urgent work


class Priority(IntEnum):
    """Lower goes first (see the module docstring)."""

    URGENT = 0
    ROUTINE = 1
    INTERIM = 2


class BudgetBusy(Exception):  # noqa: N818 - a signal, not an error
    """An interim request was refused: no slot now; try again in `retry_after` seconds."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"global budget busy; retry in {retry_after:.2f} s")
        self.retry_after = retry_after


_PRIORITY: contextvars.ContextVar[Priority] = contextvars.ContextVar("discord_priority",
                                                                     default=Priority.ROUTINE)


def current_priority() -> Priority:
    """The priority of the request the current task is about to make."""
    return _PRIORITY.get()


@contextlib.contextmanager
def request_priority(priority: Priority) -> Iterator[None]:
    """Requests made inside (by this task) carry `priority` to the budget."""
    token = _PRIORITY.set(priority)
    try:
        yield
    finally:
        _PRIORITY.reset(token)


@dataclass(order=True, slots=True)
class _Waiter:
    priority: int
    seq: int
    wake: asyncio.Event = field(compare=False, default_factory=asyncio.Event)
    gone: bool = field(compare=False, default=False)


@dataclass(frozen=True, slots=True)
class Departure:
    """A request let go: when it was counted (`GlobalBudget.settle` takes this back) and
    how long it waited for its slot."""

    at: float
    waited: float = 0.0


def window_of(rate: float) -> tuple[int, float]:
    """(requests, seconds) of the sliding window for `rate` requests per second: at least
    one second (Discord's window); slower rates get one request per longer window."""
    capacity = max(1, math.floor(rate * WINDOW_SECONDS))
    return capacity, max(WINDOW_SECONDS, capacity / rate)


def interim_capacity(capacity: int) -> int:
    """The window's slots interim edits may use: the rest are kept for urgent work."""
    return max(1, capacity - max(1, round(capacity * URGENT_SHARE)))


class GlobalBudget:
    """A sliding window of `capacity` requests per `window` seconds, shared by every task.

    `acquire` waits (urgent before routine, first come first served within one) and
    records the departure; `try_interim` never waits; `settle` counts a request again
    from its return.
    """

    def __init__(self, rate: float, *, clock: Clock | None = None, margin: float = SAFETY_MARGIN) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive (no budget at all is `None`)")
        self.capacity, self.window = window_of(rate)
        self.span = self.window + margin
        self.interim_capacity = interim_capacity(self.capacity)
        self._clock: Clock = clock or MonotonicClock()
        self._log = SlidingLog(self.span)
        self._waiters: list[_Waiter] = []
        self._queued = 0
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        """Requests queued for a slot now."""
        return self._queued

    def _free_in(self, now: float, capacity: int) -> float:
        """Seconds until a request of `capacity`'s class may leave (0: now)."""
        return self._log.free_in(now, capacity) or 0.0  # nothing is on its way here: never None

    def _head(self) -> _Waiter | None:
        while self._waiters and self._waiters[0].gone:
            heapq.heappop(self._waiters)
        return self._waiters[0] if self._waiters else None

    def try_interim(self) -> Departure:
        """Take a slot for an interim edit now, or raise `BudgetBusy` with a retry hint."""
        now = self._clock.now()
        delay = self._free_in(now, self.interim_capacity)
        queued = self.waiting
        if delay <= 0 and not queued:
            self._log.add(now)
            return Departure(now)
        # The queue ahead leaves at about the window's pace; never hint less than one slot.
        slot = self.window / self.capacity
        raise BudgetBusy(max(delay, slot) + queued * slot)

    async def acquire(self, priority: Priority) -> Departure:
        """Wait for a slot (interim requests go to `try_interim`)."""
        if priority >= Priority.INTERIM:
            return self.try_interim()
        clock = self._clock
        started = clock.now()
        if self._head() is None and self._free_in(started, self.capacity) <= 0:
            self._log.add(started)
            return Departure(started)
        waiter = _Waiter(int(priority), next(self._seq))
        heapq.heappush(self._waiters, waiter)
        self._queued += 1
        try:
            at = await self._wait_turn(waiter)
        except BaseException:
            self._leave(waiter)
            raise
        return Departure(at, at - started)

    def settle(self, departure: Departure, *, answered: bool = True) -> None:
        """The request is back (`answered`, or failed: only `ProxyBudget` tells them apart):
        it counts from now, not from when it was let go, so its slot frees no earlier than
        Discord's count of it ends.

        Unlike a channel's budget (stream/pacing.py), a request on its way does not hold
        its slot past the window: the end is seen through aiohttp's trace, and a request
        whose end it never reported must not shrink the budget for good."""
        self._log.discard(departure.at)  # on its way longer than the window: counted from now all the same
        self._log.add(self._clock.now())

    async def _wait_turn(self, waiter: _Waiter) -> float:
        """The head of the queue sleeps until a slot frees; the others wait to become head."""
        clock = self._clock
        while True:
            if self._head() is not waiter:
                waiter.wake.clear()
                await waiter.wake.wait()
                continue
            now = clock.now()
            delay = self._free_in(now, self.capacity)
            if delay > 0:
                await clock.sleep(delay)
                continue
            heapq.heappop(self._waiters)
            waiter.gone = True
            self._queued -= 1
            self._log.add(now)
            self._wake_head()
            return now

    def _leave(self, waiter: _Waiter) -> None:
        """A cancelled waiter gives up its place; the next head is woken."""
        if waiter.gone:
            return
        waiter.gone = True
        self._queued -= 1
        self._wake_head()

    def _wake_head(self) -> None:
        head = self._head()
        if head is not None:
            head.wake.set()


# ---- behind a shared REST proxy -------------------------------------------------------------
class ProxyBudget(GlobalBudget):
    """A process's budget behind a shared REST proxy (`DISCORD_REST_PROXY`).

    The proxy holds the token's hard limit for every process, so this one is soft: the
    whole rate (`DISCORD_GLOBAL_RATE`, not this process's share) for first messages, finals
    and routine requests, urgent first as in `GlobalBudget`. Interim edits never queue and
    are held twice more:
    - to what this process's `share` of the rate (the static split, less the slots kept
      for urgent work) has left after everything else it sent in the window, and spread
      over the share's window (one per `interim_gap` seconds at most): the processes do not
      see each other, and their answers tick together (a wave of questions starts
      together), so at the whole rate each, or in bursts on top of their own first
      messages and finals, they could send interim edits that alone fill the token's
      second and queue the finals asked just after behind them; held so, all the processes'
      requests together stay under the token's rate unless first messages and finals
      alone are over it;
    - while `pressure` sees the proxy queueing (first messages and finals of every process
      together over the rate), they are refused (`BudgetBusy`, hinted with the queue's
      delay, at most `MAX_HINT`): they would only lengthen the queue that finals wait in,
      and a newer text follows anyway.

    Why it cannot starve finals: the signal and the share are read by `try_interim` alone.
    Urgent and routine requests never consult them; they wait only for the soft window at
    the whole rate, which frees a slot within a window, and then go to the proxy, which
    holds them until the token may send (it never drops them). Refusing interim edits only
    shortens the queue ahead of them.
    """

    def __init__(self, rate: float, *, share: float | None = None, clock: Clock | None = None,
                 margin: float = SAFETY_MARGIN, pressure: ProxyPressure | None = None) -> None:
        super().__init__(rate, clock=clock, margin=margin)
        self.pressure = pressure or ProxyPressure()
        self.refused = 0  # interim edits refused because the proxy was queueing
        own, own_window = window_of(min(share, rate) if share else rate)
        self.interim_share = min(self.interim_capacity, interim_capacity(own))  # per window of the share
        self.interim_gap = own_window / self.interim_share  # seconds between two interim edits at least
        self._next_interim = -math.inf  # the earliest the next interim edit may go

    def try_interim(self) -> Departure:
        now = self._clock.now()
        if self.pressure.busy(now):
            self.refused += 1
            slot = self.window / self.capacity
            raise BudgetBusy(min(MAX_HINT, max(slot, self.pressure.queue_delay(now))))
        # The window already holds everything this process let go (first messages, finals,
        # interim edits): the share's interim slots count against all of it, and the gap
        # spreads them (over the share's longer window too, when the share is under 1/s).
        delay = max(self._log.free_in(now, self.interim_share) or 0.0, self._next_interim - now)
        if delay > 0:
            raise BudgetBusy(delay)
        departure = super().try_interim()
        self._next_interim = departure.at + self.interim_gap
        return departure

    async def acquire(self, priority: Priority) -> Departure:
        departure = await super().acquire(priority)
        self.pressure.sent(departure.at)
        return departure

    def settle(self, departure: Departure, *, answered: bool = True) -> None:
        super().settle(departure, answered=answered)
        self.pressure.returned(departure.at, self._clock.now(), answered=answered)


def process_rate(global_rate: int, shard_count: int | None, shard_ids: list[int]) -> float | None:
    """This process's share of the token's budget per second; `None` when there is none.

    `global_rate` 0 means no budget here: a shared REST proxy (DISCORD_API_BASE_URL)
    enforces it for every process. Processes that split the shards share the budget in
    proportion to the shards each runs (`len(SHARD_IDS) / SHARD_COUNT`): the shares add
    up to the whole whichever way the shards are split. One process (no SHARD_IDS) runs
    every shard and takes it all.
    """
    if global_rate <= 0:
        return None
    if shard_count and shard_ids:
        return global_rate * min(len(set(shard_ids)), shard_count) / shard_count
    return float(global_rate)


# Paths (after the REST base) Discord does not count against the bot's global limit:
# interaction callbacks and the interaction webhooks (follow-ups, the original response).
EXEMPT_PREFIXES = ("/interactions/", "/webhooks/")


def counts_against_global(url: str, api_base: str) -> bool:
    """Whether a request to `url` uses the bot's global budget: a REST call under
    `api_base` (not the gateway, not the CDN) other than an interaction's."""
    if not url.startswith(api_base):
        return False
    return not url[len(api_base.rstrip("/")):].startswith(EXEMPT_PREFIXES)


def budget_from_settings(settings: Settings, clock: Clock | None = None) -> GlobalBudget | None:
    """The process's budget from DISCORD_GLOBAL_RATE and the shard split (None: lifted).

    With DISCORD_REST_PROXY the proxy holds the hard limit: a soft `ProxyBudget` at the
    whole rate, interim edits at the process's share (DISCORD_GLOBAL_RATE=0 still lifts it)."""
    if settings.DISCORD_REST_PROXY and settings.DISCORD_GLOBAL_RATE > 0:
        if not settings.DISCORD_API_BASE_URL:
            log.warning("DISCORD_REST_PROXY=true without DISCORD_API_BASE_URL: requests go to Discord "
                        "itself, and each process may use the whole DISCORD_GLOBAL_RATE")
        share = process_rate(settings.DISCORD_GLOBAL_RATE, settings.SHARD_COUNT, settings.SHARD_IDS)
        return ProxyBudget(float(settings.DISCORD_GLOBAL_RATE), share=share, clock=clock)
    rate = process_rate(settings.DISCORD_GLOBAL_RATE, settings.SHARD_COUNT, settings.SHARD_IDS)
    if rate is None:
        if not settings.DISCORD_API_BASE_URL:
            log.warning("DISCORD_GLOBAL_RATE=0 without a REST proxy in DISCORD_API_BASE_URL: "
                        "nothing keeps the bot within Discord's global limit")
        return None
    return GlobalBudget(rate, clock=clock)
