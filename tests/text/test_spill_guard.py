"""Rules G1-G5: the reasoning spill guard."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.text.emoji import is_extended_pictographic
from providers.text.spill_guard import (
    ReasoningContentSpillGuard,
    is_answer_start,
    is_lowercase_letter,
)
from tests.support.data_splits import one_char_deltas, splits


def feed_all(deltas, *, armed=True):
    """Feed deltas to a guard (armed by reasoning first), then flush."""
    guard = ReasoningContentSpillGuard()
    if armed:
        guard.observe_reasoning("thinking about it")
    results = [guard.feed(d) for d in deltas]
    results.append(guard.flush())
    content = "".join(r.content for r in results)
    spilled = [r.spilled_thought for r in results if r.spilled_thought is not None]
    return content, spilled, results


FIRES = [
    ("let me see.Sure thing", "Sure thing", "let me see."),
    ("must do.Hello!", "Hello!", "must do."),
    ("wait.Actually, no", "Actually, no", "wait."),  # single word, answer-like start
    ("g it out.hey master 👋", "hey master 👋", "g it out."),  # multi-word, lowercase reply
    ("ok then.👋 hi", "👋 hi", "ok then."),
    ("hmm...Okay", "Okay", "hmm..."),
    ("really?!Yes", "Yes", "really?!"),
    ("done!*bold* answer", "*bold* answer", "done!"),
    ("so.(aside)", "(aside)", "so."),
    ("so.\u201cquoted\u201d", "\u201cquoted\u201d", "so."),
    ("so.「引用」", "「引用」", "so."),
    ("ok。好的", "好的", "ok。"),  # caseless letter after a CJK boundary
    ("alright！Ｏｋ", "Ｏｋ", "alright！"),
    ("  \n let me check.Here", "Here", "let me check."),  # leading whitespace joins the spill
    ("costs 3.50 now.Sure", "Sure", "costs 3.50 now."),  # a decimal point is no boundary
    ("so it is.2 items", "2 items", "so it is."),  # multi-word fragment
    ("the file a.b is ok.Sure", "b is ok.Sure", "the file a."),  # G5 accepted collateral
    ("call `f` then.Done", "Done", "call `f` then."),  # even backticks: code span closed
    ("ǆx.ǅabc", "ǅabc", "ǆx."),  # title-case letter is an answer start
]


@pytest.mark.parametrize(("text", "visible", "spilled"), FIRES)
def test_fires(text, visible, spilled):
    for deltas in ([text], one_char_deltas(text)):
        content, spills, results = feed_all(deltas)
        assert (content, spills) == (visible, [spilled])
        assert any(r.changed for r in results)


UNCHANGED = [
    "let me see. Sure thing",  # spaced boundary never fires
    "see. Sure",
    "wait.actually no",  # single-word fragment glued to a lowercase continuation
    "e.g. this",
    "version 3.5 is out",  # decimal only, no boundary
    "pi is 3.14159",
    "use `obj.Method` here.Then",  # odd backticks before the boundary: inline code
    "run `cfg.Load",  # a still-open code span
    "`code.Start` first",  # leading backtick is not lowercase
    "Sure.Thing",  # capital start
    "1. First",  # digit start
    "\"quoted.Start\"",
    "想想。好的",  # caseless first letter
    "😀 hi.There",
    "ok.2 items",  # single word, digit is not an answer start
    "done…Next",  # an ellipsis character is no boundary (and no boundary follows)
    "a" * 200 + ".Sure",  # no boundary within the first 180 core characters
    "x" * 178 + "...Sure",  # the boundary run reaches the horizon
    "so it is.   ",  # the remainder is whitespace only, released at flush
    "so it is. \nNext",  # remainder starts with whitespace
    "",
    "   ",
]


@pytest.mark.parametrize("text", UNCHANGED)
def test_does_not_fire(text):
    for deltas in ([text], one_char_deltas(text)):
        content, spills, _ = feed_all(deltas)
        assert (content, spills) == (text, [])


def test_scope_g1_never_armed_passes_through():
    content, spills, results = feed_all(["must do.Hello!"], armed=False)
    assert (content, spills) == ("must do.Hello!", [])
    assert results[0].changed is False


@pytest.mark.parametrize("reasoning", ["", None, 42, b"bytes"])
def test_scope_g1_arms_only_on_non_empty_string(reasoning):
    guard = ReasoningContentSpillGuard()
    guard.observe_reasoning(reasoning)
    r = guard.feed("must do.Hello!")
    assert (r.content, r.changed, r.spilled_thought) == ("must do.Hello!", False, None)


def test_scope_g1_first_visible_content_only():
    guard = ReasoningContentSpillGuard()
    guard.observe_reasoning("r")
    assert guard.feed("Hello there.").content == "Hello there."  # decided, started
    guard.observe_reasoning("more reasoning")  # visible content started: no re-arm
    r = guard.feed("must do.Hello!")
    assert (r.content, r.changed, r.spilled_thought) == ("must do.Hello!", False, None)


def test_scope_g1_content_before_reasoning_means_started():
    guard = ReasoningContentSpillGuard()
    assert guard.feed("hi").changed is False
    guard.observe_reasoning("late reasoning")
    assert guard.feed("must do.Hello!").content == "must do.Hello!"


def test_empty_content_changes_nothing_and_does_not_start():
    guard = ReasoningContentSpillGuard()
    r = guard.feed("")
    assert (r.content, r.changed, r.spilled_thought) == ("", False, None)
    guard.observe_reasoning("r")  # still armable: the empty content did not start anything
    r = guard.feed("must do.Hello!")
    assert (r.content, r.spilled_thought) == ("Hello!", "must do.")


def test_hold_and_release_g4():
    guard = ReasoningContentSpillGuard()
    guard.observe_reasoning("r")
    r = guard.feed("let me")
    assert (r.content, r.changed, r.spilled_thought) == ("", True, None)
    r = guard.feed(" see")
    assert (r.content, r.changed) == ("", True)
    r = guard.feed(". Sure")
    assert (r.content, r.changed, r.spilled_thought) == ("let me see. Sure", True, None)
    r = guard.feed(" more")
    assert (r.content, r.changed) == (" more", False)


def test_decimal_point_at_the_end_is_held_until_the_next_character():
    guard = ReasoningContentSpillGuard()
    guard.observe_reasoning("r")
    assert guard.feed("costs 3.").content == ""
    assert guard.feed("5 then.Ok").content == "Ok"


def test_flush_releases_unchanged_and_never_spills():
    guard = ReasoningContentSpillGuard()
    guard.observe_reasoning("r")
    assert guard.feed("must do.").content == ""
    r = guard.flush()
    assert (r.content, r.changed, r.spilled_thought) == ("must do.", True, None)
    r = guard.flush()
    assert (r.content, r.changed, r.spilled_thought) == ("", False, None)


def test_character_classes():
    assert is_lowercase_letter("a") and is_lowercase_letter("ß") and is_lowercase_letter("é")
    assert not is_lowercase_letter("A") and not is_lowercase_letter("中")
    assert not is_lowercase_letter("ǅ") and not is_lowercase_letter("1")
    assert all(is_answer_start(c) for c in "*_([{\"'“”‘’「『（AÉ中😀")
    assert not any(is_answer_start(c) for c in "a1-.` é")
    assert is_extended_pictographic("👋") and is_extended_pictographic("©")
    assert not is_extended_pictographic("a") and not is_extended_pictographic("中")


# ---- properties -------------------------------------------------------------------------

_TOKENS = [
    "let", "me", "see", " ", "  ", "\n", ".", "!", "?", "...", "。", "Sure", "ok", "x",
    "3", "5", "`", "\u2026", "😀", "\"", "好", "A", "the", "e.g", "1.5", "(", "ǅ",
]
_content = st.lists(st.sampled_from(_TOKENS), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_split_invariance_and_nothing_lost(data):
    """Any re-splitting gives the same visible text and the same spilled fragment."""
    text = data.draw(_content)
    deltas = data.draw(splits(text))
    whole_content, whole_spills, _ = feed_all([text])
    content, spills, _ = feed_all(deltas)
    assert (content, spills) == (whole_content, whole_spills)
    # Nothing is lost: visible + spilled fragment (as cut) is the input.
    if spills:
        prefix = text[: len(text) - len(content)]
        assert text.endswith(content) and prefix.strip() == spills[0]
    else:
        assert content == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=15), max_size=8), st.booleans())
def test_fuzz_never_raises(deltas, armed):
    content, spills, _ = feed_all(deltas, armed=armed)
    text = "".join(deltas)
    assert text.endswith(content)
    assert len(spills) <= 1
