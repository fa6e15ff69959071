"""The sliding log both Discord budgets keep: its answer matches counting by hand."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stream.window import SlidingLog

SPAN = 1.1


def in_window(times: list[float], now: float) -> int:
    return sum(1 for t in times if t > now - SPAN)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=5, allow_nan=False), max_size=30),
       st.integers(min_value=1, max_value=8), st.integers(min_value=0, max_value=3),
       st.floats(min_value=0, max_value=6, allow_nan=False))
def test_free_in_is_when_the_window_has_room(times, capacity, on_the_way, now):
    kept = [t for t in times if t <= now]  # the log never holds the future when asked
    log = SlidingLog(SPAN)
    for at in kept:  # returns come back in any order
        log.add(at)
    wait = log.free_in(now, capacity, on_the_way)
    used = in_window(kept, now) + on_the_way
    if used < capacity:
        assert wait == 0.0
    elif wait is None:
        assert in_window(kept, now) <= used - capacity  # only a return can free a slot
    else:
        assert in_window(kept, now + wait + 1e-9) + on_the_way < capacity  # room once it has passed
        if wait > 1e-9:
            assert in_window(kept, now + wait - 1e-6) + on_the_way >= capacity  # and not before


def test_a_discarded_operation_no_longer_counts():
    log = SlidingLog(SPAN)
    log.add(1.0)
    log.add(0.5)
    assert list(log.times) == [0.5, 1.0]
    assert log.discard(0.5) and not log.discard(0.5)
    assert log.free_in(1.2, 1) == 1.0 + SPAN - 1.2
