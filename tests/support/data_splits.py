"""Shared Hypothesis helpers: re-split a text into stream deltas."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def splits(draw, text: str) -> list[str]:
    """Any division of `text` into consecutive deltas (empty deltas included)."""
    if not text:
        return draw(st.sampled_from([[], [""]]))
    cuts = draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=min(len(text) + 2, 40)))
    points = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in zip(points, points[1:], strict=False)]


def one_char_deltas(text: str) -> list[str]:
    return list(text)


def is_subsequence(small: str, big: str) -> bool:
    """True when the characters of `small` appear in `big` in the same order."""
    it = iter(big)
    return all(ch in it for ch in small)
