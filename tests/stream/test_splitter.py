"""The message splitter: limits, boundaries, fences, tables, and window-only decisions."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from stream.splitter import LOOKAHEAD, split_all, split_message

FENCE_LINE = re.compile(r"^[ \t]*```", re.MULTILINE)


def fence_lines(text: str) -> int:
    return len(FENCE_LINE.findall(text))


def squash(text: str) -> str:
    """Text without fence lines and without any whitespace: what must survive splitting."""
    kept = [line for line in text.split("\n") if not FENCE_LINE.match(line)]
    return re.sub(r"\s+", "", "\n".join(kept))


# -- markdown-ish text -------------------------------------------------------------------

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789.,!?'*_-", min_size=1, max_size=14)
sentence = st.lists(words, min_size=1, max_size=14).map(" ".join)
paragraph = st.lists(sentence, min_size=1, max_size=6).map(lambda s: ". ".join(s) + ".")
code_line = st.text(alphabet="abcdefxyz0123456789 =()[]{}:;+-*/#'\"<>", max_size=50).filter(
    lambda s: not s.lstrip().startswith("```")
)
code_block = st.tuples(
    st.sampled_from(["", "python", "js", "rust", "c++"]),
    st.lists(code_line, min_size=1, max_size=40),
).map(lambda t: f"```{t[0]}\n" + "\n".join(t[1]) + "\n```")
table_row = st.lists(st.text(alphabet="abc123 ", min_size=1, max_size=8), min_size=2, max_size=3)
table = st.lists(table_row, min_size=1, max_size=5).map(
    lambda rows: "| h1 | h2 |\n|---|---|\n" + "\n".join("| " + " | ".join(r[:2]) + " |" for r in rows)
)
long_word = st.text(alphabet="xyz", min_size=60, max_size=300)
bullet = sentence.map(lambda s: "- " + s)
block = st.one_of(paragraph, paragraph, code_block, table, long_word, bullet, st.just("## Heading"))
document = st.lists(block, min_size=1, max_size=25).map("\n\n".join)


@settings(max_examples=250, deadline=None)
@given(document, st.integers(min_value=120, max_value=600))
def test_split_pieces_fit_keep_fences_balanced_and_lose_nothing(text, limit):
    pieces = split_all(text, limit)
    assert all(len(piece) <= limit for piece in pieces)
    assert all(fence_lines(piece) % 2 == 0 for piece in pieces)
    assert squash("\n".join(pieces)) == squash(text)
    assert all(piece.strip() for piece in pieces[:-1])


@settings(max_examples=200, deadline=None)
@given(document, st.integers(min_value=120, max_value=600))
def test_each_split_is_head_separator_rest(text, limit):
    while (split := split_message(text, limit)) is not None:
        assert text[split.end : split.cut].strip() == ""
        assert split.rest == split.reopen + text[split.cut :]
        if split.reopen:
            backticks = re.match(r"`+", split.reopen).group(0)
            assert split.head == text[: split.end].rstrip("\n") + "\n" + backticks
            assert split.reopen.endswith("\n")
        else:
            assert split.head == text[: split.end]
        text = split.rest


@settings(max_examples=150, deadline=None)
@given(document, st.integers(min_value=120, max_value=600), st.text(max_size=40))
def test_decision_reads_only_the_window(text, limit, suffix):
    window = text[: limit + LOOKAHEAD]
    if len(window) <= limit:
        return
    full, cut_short = split_message(text, limit), split_message(window + suffix, limit)
    assert (full.end, full.cut, full.head, full.reopen) == (
        cut_short.end,
        cut_short.cut,
        cut_short.head,
        cut_short.reopen,
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(paragraph, table), min_size=2, max_size=20).map("\n\n".join))
def test_tables_that_fit_are_never_cut(text):
    limit = 400
    tables = re.findall(r"\| h1 \| h2 \|\n\|---\|---\|(?:\n\|[^\n]*)*", text)
    pieces = split_all(text, limit)
    for found in tables:
        if len(found) <= limit // 2:
            assert any(found in piece for piece in pieces)


def test_prefers_paragraph_then_line_then_sentence_then_word():
    para = "a" * 1200 + "\n\n" + "b" * 700 + "\nline two " + "c" * 300
    assert split_message(para).end == 1200
    line = "a" * 1200 + "\n" + "b" * 700 + ". sentence " + "c" * 300
    assert split_message(line).end == 1200  # a line break beats a later sentence end
    sentence = "a" * 1100 + ". " + "b" * 500 + " " + "c" * 600
    assert split_message(sentence).end == 1101  # a sentence end beats a later space
    words = "word " * 500
    split = split_message(words)
    assert split.head.endswith("word") and len(split.head) <= 2000
    assert split.rest.startswith("word")


def test_hard_cut_only_without_any_boundary():
    text = "x" * 4500
    assert [len(p) for p in split_all(text)] == [2000, 2000, 500]


def test_code_fence_is_closed_and_reopened_with_its_language():
    code = "\n".join(f"    value_{i} = compute({i})" for i in range(120))
    text = "Here is the code:\n```python\n" + code + "\n```\nDone."
    pieces = split_all(text)
    assert len(pieces) >= 2
    assert pieces[0].startswith("Here is the code:")
    assert pieces[0].endswith("\n```")
    assert pieces[1].startswith("```python\n    value_")  # indentation of the code kept
    assert all(fence_lines(p) == 2 for p in pieces[:-1])
    assert pieces[-1].endswith("```\nDone.")


def test_cut_before_a_fence_is_preferred_to_a_cut_inside_it():
    text = "p" * 1500 + "\n\n```js\n" + "let x = 1;\n" * 100 + "```"
    split = split_message(text)
    assert split.end == 1500 and split.reopen == ""
    assert split.rest.startswith("```js\n")


def test_longer_backtick_fences_close_with_the_same_run():
    text = "````md\n" + "```inner```\n" * 300 + "````"
    pieces = split_all(text)
    assert pieces[0].endswith("\n````")
    assert pieces[1].startswith("````md\n")


def test_table_longer_than_a_message_is_cut_between_rows():
    rows = "\n".join(f"| {i} | {'y' * 30} |" for i in range(120))
    text = "| a | b |\n|---|---|\n" + rows
    pieces = split_all(text)
    assert all(len(p) <= 2000 for p in pieces)
    assert all(line.startswith("|") and line.endswith("|") for p in pieces for line in p.split("\n") if line)


def test_short_text_is_not_split():
    assert split_message("hello") is None
    assert split_all("hello") == ["hello"]


def test_cjk_sentence_ends_are_boundaries():
    text = "あ" * 1500 + "。" + "い" * 900
    split = split_message(text)
    assert split.end == 1501 and split.head.endswith("。")


def test_word_cuts_avoid_inline_code_spans():
    text = "lead " + "x" * 1500 + " then `a span with many spaces inside it` " + "y" * 600
    split = split_message(text)
    span_start = text.index("`")
    assert split.end <= span_start or split.end >= text.index("`", span_start + 1) + 1


def test_hard_cut_never_splits_an_emoji_sequence():
    family = "👨\u200d👩\u200d👧"
    for offset in range(5):
        text = "a" * offset + family * 700
        pieces = split_all(text)
        assert len(pieces) == 2 and "".join(pieces) == text
        assert pieces[1].startswith("👨\u200d") and pieces[0].endswith("👧")


def test_a_message_does_not_end_with_a_heading():
    text = "intro words. " * 100 + "\n\n## Next part\n\n" + "body words here. " * 80
    split = split_message(text)
    assert not split.head.rstrip().endswith("## Next part")
    assert split.rest.startswith("## Next part") or "## Next part" in split.head
