"""What this process did with keys since its configuration cache last read them.

Key health is written in batches (`bot.load.write_behind`), so the cached pool may not show
yet what this process just did. `KeyUse` fills the gap: a rest set here applies to the
next lease at once, and keys used here go to the back of the line, so turns rotate
through a pool instead of all taking its first key.
"""

from __future__ import annotations

from datetime import datetime

from bot.repo.keys import KeyLease, KeyPool, KeyRef

MAX_REMEMBERED_KEYS = 10_000


class KeyUse:
    """Rests set here and the order keys were used here (bounded)."""

    def __init__(self) -> None:
        self._rests: dict[KeyRef, datetime] = {}
        self._used: dict[KeyRef, int] = {}
        self._count = 0

    def used(self, ref: KeyRef) -> None:
        """A success: to the back of the line, and no longer resting."""
        self._mark(ref)
        self._rests.pop(ref, None)

    def rested(self, ref: KeyRef, until: datetime | None, now: datetime) -> None:
        """A failure: to the back of the line, resting until `until` (a rest only extends)."""
        self._mark(ref)
        if until is not None and (ref not in self._rests or until > self._rests[ref]):
            self._rests[ref] = until
        if len(self._rests) > MAX_REMEMBERED_KEYS:
            self._rests = {r: u for r, u in self._rests.items() if u > now}

    def _mark(self, ref: KeyRef) -> None:
        self._count += 1
        self._used[ref] = self._count
        if len(self._used) > MAX_REMEMBERED_KEYS:  # keep the newest half
            newest = sorted(self._used.items(), key=lambda item: item[1])[-MAX_REMEMBERED_KEYS // 2:]
            self._used = dict(newest)

    def usable(self, leases: list[KeyLease], now: datetime) -> list[KeyLease]:
        """`leases` minus those resting here, least recently used here first (a stable
        sort: keys not used here keep the database's least-recently-used order)."""
        kept = [lease for lease in leases if not (lease.ref in self._rests and self._rests[lease.ref] > now)]
        ordered = sorted(kept, key=lambda lease: self._used.get(lease.ref, 0))
        return KeyPool(ordered, configured=leases.configured) if isinstance(leases, KeyPool) else ordered
