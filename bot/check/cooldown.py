"""One check at a time per server (and per member for their own route).

A check sends several requests at once on someone's key; a manager pressing it again
and again would spend that key's rate limit and money. A scope (a server, a member) may
start one check per `seconds`, counted from its start, so two at once are refused too.
Kept in this process: every interaction of a server reaches its shard's process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

CHECK_SECONDS = 60.0


class Cooldown:
    """When each scope may check again (see the module docstring)."""

    def __init__(self, seconds: float = CHECK_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._until: dict[Hashable, float] = {}

    def take(self, scope: Hashable) -> float:
        """0 when `scope` may check now (the check counts from now on); else the seconds
        it still waits."""
        now = self._clock()
        self._until = {s: until for s, until in self._until.items() if until > now}  # the past goes
        left = self._until.get(scope, now) - now
        if left > 0:
            return left
        self._until[scope] = now + self.seconds
        return 0.0

    def give_back(self, scope: Hashable) -> None:
        """The check did not run after all (a limit refused it): the scope may check again."""
        self._until.pop(scope, None)
