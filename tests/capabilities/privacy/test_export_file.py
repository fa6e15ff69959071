"""The export file's shape and bound, for any rows: valid JSON of at most `bound` bytes,
each section the oldest rows that fit, the header naming what was left out."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.capabilities.privacy.export_file import HEADER_ROOM, export_file

values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=300))
rows = st.lists(st.dictionaries(st.text(min_size=1, max_size=10), values, max_size=5), max_size=40)
names = st.sampled_from(["personal_settings", "usage_days", "answers", "memories", "reminders"])
sections = st.lists(st.tuples(names, rows), max_size=5, unique_by=lambda s: s[0])


@settings(max_examples=200, deadline=None)
@given(sections, st.integers(min_value=HEADER_ROOM + 64, max_value=HEADER_ROOM + 20_000))
def test_any_rows_make_a_bounded_valid_file(given_sections, bound):
    made = export_file({"what": "everything"}, given_sections, bound)
    assert len(made.data) <= bound
    read = json.loads(made.data.decode("utf-8"))
    assert read["header"]["what"] == "everything"
    assert read["header"].get("left_out", {}) == made.left_out
    for name, wanted in given_sections:
        kept = read[name]
        assert kept == wanted[:len(kept)]  # the oldest rows, in order
        assert len(kept) + made.left_out.get(name, 0) == len(wanted)


def test_a_file_under_its_bound_is_whole_and_says_nothing_was_cut():
    made = export_file({"what": "x"}, [("answers", [{"reasoning": "é" * 100}] * 3)], HEADER_ROOM + 1000)
    assert not made.cut and "left_out" not in json.loads(made.data)["header"]


def test_a_cut_keeps_later_sections_that_still_fit():
    big = [{"reasoning": "r" * 400} for _ in range(10)]
    made = export_file({"what": "x"}, [("answers", big), ("personal_settings", [{"key": "\u2026abcd"}])],
                       HEADER_ROOM + 1000)
    read = json.loads(made.data)
    assert made.left_out == {"answers": 8} and read["header"]["left_out"] == {"answers": 8}
    assert len(read["answers"]) == 2 and read["personal_settings"] == [{"key": "\u2026abcd"}]
