"""Whether a shared REST proxy is holding requests back: the back-pressure signal of
`bot.edge.budget.ProxyBudget`.

Pure: answer times in (from when a request was let go to its response headers), busy or
calm out. Requests start waiting inside the proxy when the token's global limit is spent;
their answer times rise above the floor (the quickest answer of the last ten minutes) and
interim edits are then refused first, so finals and first messages meet a shorter queue.
"""

from __future__ import annotations

import contextlib
from bisect import insort
from collections import deque

SAMPLES = 4  # requests in a row that must agree before the signal changes (its evidence unit)
BUSY_DELAY = 0.25  # seconds of queueing (over the floor) that mean busy: ~12 requests at 50/s
CALM_FRACTION = 0.4  # calm again below this fraction of the busy margin (0.1 s by default)
RECENT_SECONDS = 2.0  # no return for this long and nothing out late: the queue is gone
FLOOR_BUCKET = 60.0  # the floor keeps one minimum per this many seconds...
FLOOR_BUCKETS = 10  # ...for this many buckets: the least answer time of the last ten minutes
LOST_AFTER = 30.0  # a request out longer than this had its end never reported: forgotten
MAX_HINT = 1.0  # seconds: a refused interim edit looks again at least this soon


class ProxyPressure:
    """Whether the shared REST proxy is queueing our requests, from their answer times alone.

    A proxy that enforces the global limit makes requests wait inside it instead of
    answering 429, so the only sign of a queue is time: every request of the token then
    comes back late by about the same amount (the queue is one, first in first out). The
    signal compares recent answer times with the floor, the least answer time of the last
    ten minutes (`FLOOR_BUCKET` × `FLOOR_BUCKETS`, one minimum per bucket, as LEDBAT keeps
    its base delay): what lies above the floor is queueing, not the network.

    Busy when the last `SAMPLES` answers all came back at least the busy margin over the
    floor, or that many requests are out longer than that now (a deep queue shows before
    its requests return). Calm again when the last `SAMPLES` answers were all back within
    `CALM_FRACTION` of that margin, or nothing came back for `RECENT_SECONDS` and nothing
    is out late. Two levels and several requests in a row are the hysteresis: one slow
    request (an upload, a route's own bucket waited out in the proxy) never turns it on
    and holds it on for `SAMPLES` answers at most, and the state does not flap around one
    level. The margin is
    `BUSY_DELAY` or the floor itself, whichever is more (a distant proxy's jitter grows
    with its distance).

    Cost: per request one insertion into and one removal from the sorted times of the
    requests out (a handful to a few hundred), a ring of `SAMPLES` answer times and one
    bucket's minimum; per interim edit asked, `SAMPLES` comparisons and one index. No request, task or
    timer of its own. Its limits: a queue is seen only once `SAMPLES` requests of this
    process waited in it (a process that sends little sees it late, and adds little to
    it); a process that starts while the proxy is already queueing takes the queue for its
    floor until one request comes back quickly; a queue that lasts longer than the floor's
    ten minutes becomes the floor. Pure timing on the times it is given.
    """

    def __init__(self, *, samples: int = SAMPLES, busy_delay: float = BUSY_DELAY,
                 calm_fraction: float = CALM_FRACTION, recent: float = RECENT_SECONDS,
                 floor_bucket: float = FLOOR_BUCKET, floor_buckets: int = FLOOR_BUCKETS,
                 lost_after: float = LOST_AFTER) -> None:
        self.samples = max(1, samples)
        self.busy_delay = busy_delay
        self.calm_fraction = calm_fraction
        self.recent = recent
        self.lost_after = lost_after
        self._floor_bucket = floor_bucket
        self._floors: deque[tuple[float, float]] = deque(maxlen=max(1, floor_buckets))  # (bucket start, least)
        self._answers: deque[float] = deque(maxlen=self.samples)  # the newest answer times
        self._last_answer: float | None = None  # when the newest answer came back
        self._out: deque[float] = deque()  # when the requests out now were let go, oldest first
        self._busy = False
        self.spells = 0  # times it turned busy (tests and logs read it)

    # -- what it is told ----------------------------------------------------------------
    def sent(self, at: float) -> None:
        """A request was let go at `at`."""
        insort(self._out, at)

    def returned(self, at: float, now: float, *, answered: bool = True) -> None:
        """The request let go at `at` is back at `now`; a failed one (no answer: refused
        connection, cancelled) says nothing of the proxy's queue and only leaves."""
        with contextlib.suppress(ValueError):
            self._out.remove(at)
        if not answered:
            return
        latency = max(0.0, now - at)
        self._answers.append(latency)
        self._last_answer = now
        floors = self._floors
        if floors and now < floors[-1][0] + self._floor_bucket:
            start, least = floors[-1]
            if latency < least:
                floors[-1] = (start, latency)
        else:
            floors.append((now, latency))  # the oldest bucket leaves (maxlen)

    # -- what it says -------------------------------------------------------------------
    def floor(self, now: float) -> float | None:
        """The least answer time of the kept buckets (None: nothing answered yet)."""
        horizon = self._floor_bucket * (self._floors.maxlen or 1)
        while len(self._floors) > 1 and self._floors[0][0] <= now - horizon:
            self._floors.popleft()
        return min(least for _, least in self._floors) if self._floors else None

    def busy(self, now: float) -> bool:
        """Whether the proxy is queueing our requests now (see the class docstring)."""
        floor = self.floor(now)
        if floor is None:
            return False
        margin = max(self.busy_delay, floor)
        busy_at, calm_at = floor + margin, floor + margin * self.calm_fraction
        out = self._forget_lost(now)
        answers = self._answers
        # The answers speak for the queue while they are recent; after a quiet spell, not.
        current = len(answers) == self.samples and self._last_answer is not None \
            and now - self._last_answer < self.recent
        if (current and min(answers) >= busy_at) or self._out_longer(out, now, busy_at, self.samples):
            if not self._busy:
                self.spells += 1
            self._busy = True
        elif self._busy:
            back_quickly = current and max(answers) < calm_at
            quiet = not current and not self._out_longer(out, now, calm_at, 1)
            if back_quickly or quiet:
                self._busy = False
        return self._busy

    def queue_delay(self, now: float) -> float:
        """How long requests wait in the proxy now, as far as we can tell (seconds)."""
        floor = self.floor(now)
        if floor is None:
            return 0.0
        seen = min(self._answers) if self._answers else floor
        if len(self._out) >= self.samples:  # the requests out are a later word than the answers
            seen = max(seen, now - self._out[self.samples - 1])
        return max(0.0, seen - floor)

    def _forget_lost(self, now: float) -> deque[float]:
        out = self._out
        while out and out[0] <= now - self.lost_after:
            out.popleft()
        return out

    @staticmethod
    def _out_longer(out: deque[float], now: float, level: float, count: int) -> bool:
        """At least `count` requests are out longer than `level` seconds."""
        return len(out) >= count and now - out[count - 1] >= level
