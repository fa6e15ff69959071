"""The edit budget: never more than the limit per window, reserve for mandatory edits."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream.pacing import ChannelBudgets, EditBudget
from stream.sink import RateLimitInfo


def most_in_a_window(times: list[float], window: float) -> int:
    """The most operations Discord would count in any window opened by one of them."""
    return max((sum(1 for t in times[i:] if t < start + window) for i, start in enumerate(times)), default=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(min_value=0, max_value=3), st.booleans()), max_size=60))
def test_operations_that_wait_their_delay_never_exceed_the_limit(requests):
    budget = EditBudget()
    now, times = 0.0, []
    for gap, mandatory in requests:
        now += gap
        now += budget.delay(now, mandatory=mandatory)
        budget.record(now)
        times.append(now)
    assert most_in_a_window(times, budget.window) <= budget.limit


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(min_value=0, max_value=3), st.floats(min_value=0, max_value=4)), max_size=60))
@example([(0.0, 4.0)] + [(0.0, 0.0)] * 5)  # the first held 4 s, five more at once when it lands
def test_operations_held_before_they_arrive_count_from_their_arrival(requests):
    """One operation at a time, each held a while on its way (the global budget): arrivals,
    which Discord counts, never exceed the limit per window."""
    budget = EditBudget()
    now, arrivals = 0.0, []
    for gap, held in requests:
        now += gap
        now += budget.delay(now, mandatory=True)
        budget.start(now)
        now += held
        arrivals.append(now)
        budget.settle(now)
    assert most_in_a_window(arrivals, budget.window) <= budget.limit


def test_ordinary_edits_leave_the_reserve_for_the_final_edit():
    budget = EditBudget(limit=5, window=5.0, reserve=1)
    now = 0.0
    for _ in range(4):
        now += budget.delay(now)
        budget.record(now)
    assert budget.delay(now) > 0  # a fifth ordinary edit must wait...
    assert budget.delay(now, mandatory=True) == 0  # ...the final edit need not


def test_ordinary_edits_are_spread_evenly():
    budget = EditBudget(limit=5, window=5.0, reserve=1)
    budget.record(0.0)
    assert abs(budget.delay(0.0) - (5.0 + budget.margin) / 4) < 1e-9


def test_exhausted_headers_wait_for_the_reset():
    budget = EditBudget()
    budget.record(0.0)
    budget.observe(RateLimitInfo(limit=5, remaining=0, reset_after=2.0), now=0.1)
    assert budget.delay(0.2, mandatory=True) >= 1.9
    assert budget.delay(2.5, mandatory=True) == 0


def test_channels_get_their_own_shared_budget():
    budgets = ChannelBudgets()
    assert budgets.for_channel(1) is budgets.for_channel(1)
    assert budgets.for_channel(1) is not budgets.for_channel(2)


def test_operations_still_on_their_way_fill_the_window_whatever_their_age():
    budget = EditBudget(limit=5, window=5.0)
    for _ in range(5):
        budget.start(0.0)  # five held by the global budget for longer than the window
    assert budget.delay(7.0, mandatory=True) > 0
    for _ in range(5):
        budget.settle(8.0)  # they landed together
    assert abs(budget.delay(8.0, mandatory=True) - (5.0 + budget.margin)) < 1e-9


def test_a_forgotten_operation_frees_its_slot():
    budget = EditBudget(limit=5, window=5.0)
    for _ in range(5):
        budget.start(0.0)
    budget.forget()
    assert budget.delay(0.0, mandatory=True) == 0
