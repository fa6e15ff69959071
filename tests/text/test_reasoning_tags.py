"""Rules T1-T3: the shared think-tag shape."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.text import reasoning_tags
from providers.text.reasoning_tags import (
    THINK_TAG_RE,
    find_think_close,
    find_trailing_tag_prefix,
)


@pytest.mark.parametrize(
    ("text", "is_tag"),
    [
        ("<think>", True),
        ("</think>", True),
        ("<THINK>", True),
        ("</Think>", True),
        ("<mm:think>", True),
        ("</mm:think>", True),
        ("<ns:think>", True),
        ("<Ab.c-1:THINK>", True),
        ("<a_b:think>", True),
        ("<x:y:think>", False),  # one namespace segment only
        ("<thinking>", False),
        ("<thinker>", False),
        ("<think >", False),  # no whitespace
        ("< think>", False),
        ("<think/>", False),  # no self-closing slash
        ("<think a='1'>", False),  # no attributes
        ("<1a:think>", False),  # namespace starts with a letter
        ("<_a:think>", False),
        ("<:think>", False),  # empty namespace
        ("<mm:>", False),
        ("<\u212athink>", False),
        ("<thin\u212a>", False),  # Kelvin sign is not an ASCII k
        ("<é:think>", False),
    ],
)
def test_tag_shape(text, is_tag):
    assert (THINK_TAG_RE.fullmatch(text) is not None) is is_tag


def test_new_vendor_namespace_needs_no_change():
    for ns in ("minimax", "qwen3.5", "vendor-x", "A1"):
        assert THINK_TAG_RE.search(f"a<{ns}:think>b").group() == f"<{ns}:think>"
        assert find_think_close(f"a</{ns}:think>b").group() == f"</{ns}:think>"


def test_find_respects_start():
    text = "<think>a</think><think>b</think>"
    assert find_think_close(text, 9).start() == 24
    assert find_think_close(text, 25) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see <ab:th", (4, "open")),
        ("x <2", None),
        ("a <", (2, "close")),  # a bare < could still become </think>
        ("<", (0, "close")),
        ("a </", (2, "close")),
        ("a </thi", (2, "close")),
        ("a </mm:th", (2, "close")),
        ("a <th", (2, "open")),
        ("a <think", (2, "open")),
        ("a <thinking", (2, "open")),  # any word can still become a namespace
        ("a <mm:", (2, "open")),
        ("a <mm:THIN", (2, "open")),
        ("a <mm:thx", None),
        ("a <mm:thinkk", None),
        ("a <x:y:th", (2, "open")),  # only the part after the last colon is judged
        ("a <_x", None),
        ("a <.x", None),
        ("a <b c", None),
        ("a <think>", None),  # complete tags are not fragments
        ("a <thi>", None),
        ("a < b", None),
        ("a <//", None),
        ("a <é", None),
        ("no angle", None),
        ("", None),
        ("<" + "a" * 63, (0, "open")),  # 64 characters counting <
        ("<" + "a" * 64, None),
        ("</" + "a" * 62, (0, "close")),
        ("</" + "a" * 63, None),
        ("x" * 1000 + "<mm:t", (1000, "open")),
    ],
)
def test_trailing_tag_prefix(text, expected):
    result = find_trailing_tag_prefix(text)
    if expected is None:
        assert result is None
    else:
        assert (result.index, result.kind) == expected


def test_pattern_pieces_are_exposed_for_other_consumers():
    # The Discord buffer and the clean-up sweep compose their own expressions from these.
    combined = re.compile(
        rf"{reasoning_tags.OPEN_TAG_PATTERN}.*?{reasoning_tags.CLOSE_TAG_PATTERN}",
        reasoning_tags.TAG_FLAGS | re.DOTALL,
    )
    assert combined.sub("", "a<mm:think>x\ny</MM:THINK>b") == "ab"
    assert re.fullmatch(reasoning_tags.NAMESPACE_PATTERN, "vendor.v2:", reasoning_tags.TAG_FLAGS)


_tag_alphabet = st.sampled_from(list("<>/:thinkTHINKmx1_.- a"))


_NAMESPACE_BODY = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*", re.ASCII)


def _straddling_tag(text: str, completion: str) -> bool:
    """True when text + completion holds a tag that starts in text and ends in completion."""
    joined = text + completion
    return any(
        m.start() < len(text) < m.end() or (m.start() < len(text) and m.end() == len(joined))
        for m in THINK_TAG_RE.finditer(joined)
        if m.end() > len(text)
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_tag_alphabet, max_size=40))
def test_trailing_prefix_agrees_with_completion(text):
    """A reported fragment can still complete to a tag; without one no tag can straddle the end."""
    result = find_trailing_tag_prefix(text)
    if result is None:
        for completion in ("think>", ":think>", "/think>", "k>", ">", "ink>"):
            assert not _straddling_tag(text, completion), completion
        return
    fragment = text[result.index :]
    closing = fragment.startswith("</")
    run = fragment[2:] if closing else fragment[1:]
    if not run:
        completion = "think>" if closing else "/think>"
        assert result.kind == "close"
    elif ":" not in run:
        completion = ":think>"
        assert result.kind == ("close" if closing else "open")
    else:
        namespace, word = run.rsplit(":", 1)
        if not _NAMESPACE_BODY.fullmatch(namespace):
            return  # T3 judges only the part after the last colon; no tag can follow
        completion = "think"[len(word) :] + ">"
        assert result.kind == ("close" if closing else "open")
    assert THINK_TAG_RE.fullmatch(fragment + completion), fragment + completion
