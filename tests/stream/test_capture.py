"""Think and <details> capture: what is hidden, what stays, and chunking invariance."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.text.reasoning_tags import THINK_TAG_RE
from stream.capture import BlockCapture, CapturedBlock


def feed_all(pieces: list[str]) -> tuple[str, list[CapturedBlock]]:
    capture = BlockCapture()
    visible = "".join(capture.feed(p) for p in pieces) + capture.flush()
    return visible, capture.blocks


def test_think_and_details_blocks_are_captured_not_shown():
    visible, blocks = feed_all(
        ["Hi <think>plan the answer</think>there.\n<details><summary>Why</summary>because</details>\nBye"]
    )
    assert visible == "Hi there.\n\nBye"
    assert blocks == [
        CapturedBlock("think", "plan the answer"),
        CapturedBlock("details", "<summary>Why</summary>because"),
    ]


def test_namespaced_and_mixed_case_think_tags_use_the_shared_shape():
    visible, blocks = feed_all(["a<mm:THINK>x</mm:think>b<Think>y</THINK>c"])
    assert visible == "abc"
    assert [b.text for b in blocks] == ["x", "y"]


def test_nested_details_and_attributes():
    visible, blocks = feed_all(["s <DETAILS open>outer <details>inner</details> tail</details> e"])
    assert visible == "s  e"
    assert blocks == [CapturedBlock("details", "outer <details>inner</details> tail")]


def test_tags_split_across_chunks_are_recognized():
    visible, blocks = feed_all(["one <th", "ink>sec", "ret</th", "ink> two <det", "ails cl", "ass='x'>d</deta", "ils> three"])
    assert visible == "one  two  three"
    assert [b.text for b in blocks] == ["secret", "d"]


def test_text_that_only_looks_like_a_tag_is_released():
    visible, blocks = feed_all(["3 < 5 and 4 <", "b>bold</b> <thinking> <details", "x> </details> end <"])
    assert visible == "3 < 5 and 4 <b>bold</b> <thinking> <detailsx> </details> end <"
    assert blocks == []


def test_stray_think_closer_is_dropped_and_unterminated_block_is_captured():
    visible, blocks = feed_all(["done.</think>Answer <think>still thinking"])
    assert visible == "done.Answer "
    assert blocks == [CapturedBlock("think", "still thinking")]


def test_tags_inside_code_are_content():
    text = (
        "Use the `<details>` element like this:\n```html\n<details><summary>More</summary>"
        "Body</details>\n<think>not mine</think>\n```\nand ``a <think> b`` stays. <think>mine</think>Done"
    )
    for size in (1, 3, len(text)):
        visible, blocks = feed_all([text[i : i + size] for i in range(0, len(text), size)])
        assert visible == text.replace("<think>mine</think>", "")
        assert blocks == [CapturedBlock("think", "mine")]


def test_fast_path_returns_text_without_tags_unchanged():
    capture = BlockCapture()
    assert capture.feed("plain text, no tags") == "plain text, no tags"


pieces_of_text = st.lists(
    st.sampled_from(
        ["<think>", "</think>", "<ns:think>", "</NS:think>", "<details>", "<details open>",
         "</details>", "<summary>s</summary>", "<", "</", "<b>", "a", "b c", "\n", "3 < 4", "x",
         "`", "``", "\n```html\n", "\n```\n"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(pieces_of_text, st.lists(st.integers(min_value=1, max_value=12), max_size=60))
def test_result_does_not_depend_on_chunking(text, sizes):
    chunks, position = [], 0
    for size in sizes:
        if position >= len(text):
            break
        chunks.append(text[position : position + size])
        position += size
    chunks.append(text[position:])
    assert feed_all(chunks) == feed_all([text])


no_openers = st.lists(
    st.sampled_from(["</think>", "</NS:think>", "</details>", "<", "</", "<b>", "<thinker>", "a", " ", "\n"]),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(no_openers, st.integers(min_value=1, max_value=7))
def test_without_openers_only_stray_think_closers_disappear(text, size):
    chunks = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    visible, blocks = feed_all(chunks)
    assert visible == THINK_TAG_RE.sub("", text)
    assert blocks == []
