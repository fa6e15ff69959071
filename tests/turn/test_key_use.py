"""What this process did with keys applies before the batched health write lands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.repo.keys import KeyLease, KeyPool, KeyRef
from bot.turn.key_use import KeyUse

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
A, B, C = (KeyLease(KeyRef("server", n), f"…{n}", f"sk-{n}") for n in (1, 2, 3))


def test_used_keys_go_to_the_back_and_a_rest_set_here_applies_at_once() -> None:
    use = KeyUse()
    pool = KeyPool([A, B, C])
    use.used(A.ref)
    assert use.usable(pool, NOW) == [B, C, A]
    use.rested(B.ref, NOW + timedelta(minutes=1), NOW)
    rested = use.usable(pool, NOW)
    assert rested == [C, A] and isinstance(rested, KeyPool) and rested.configured
    assert use.usable(pool, NOW + timedelta(minutes=2)) == [C, A, B]  # the rest is over


def test_a_shorter_rest_never_cuts_a_longer_one_and_a_success_ends_it() -> None:
    use = KeyUse()
    use.rested(A.ref, NOW + timedelta(hours=1), NOW)
    use.rested(A.ref, NOW + timedelta(minutes=1), NOW)
    assert use.usable([A, B], NOW + timedelta(minutes=5)) == [B]
    use.used(A.ref)
    assert use.usable([A, B], NOW + timedelta(minutes=5)) == [B, A]
