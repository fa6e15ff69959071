"""The text assembler (`AnswerText`): the same stream cut into other chunks assembles the
same text, blocks and message parts; and what each write of a delivery is."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stream.answer_text import AnswerText, Resume
from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from stream.sink import SentMessage
from tests.support.drive_stream import drive, pieces, scripted_done, scripted_text
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink

LIMIT = 150

fragment = st.one_of(
    st.text(alphabet="ab .\n", min_size=1, max_size=120),
    st.just("```py\nprint(1)\nprint(2)\n```\n"),
    st.just("<think>weighing it</think>"),
    st.just("<details>more</details>"),
    st.just("x" * 90),
)
document = st.lists(fragment, min_size=1, max_size=12).map("".join)


def cut_into(text: str, sizes: list[int]) -> list[str]:
    out, position, index = [], 0, 0
    while position < len(text):
        size = sizes[index % len(sizes)]
        out.append(text[position : position + size])
        position, index = position + size, index + 1
    return out


def assembled(chunks: list[str], resume: Resume | None = None) -> tuple[str, list[str], list[str]]:
    """The visible text, the captured blocks and the final message parts of a finished stream."""
    text = AnswerText(limit=LIMIT, indicator=STREAMING_INDICATOR, resume=resume)
    for chunk in chunks:
        text.append(chunk)
    text.close_blocks()
    parts = []
    while (cut := text.due_cut(final=True)) is not None:
        parts.append(cut.head)
        text.open_next(cut)
    parts.append(text.render(final=True))
    return text.full, [block.text for block in text.blocks], parts


@settings(max_examples=80, deadline=None)
@given(document, st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=20))
def test_resplitting_a_stream_does_not_change_what_is_assembled(text: str, sizes: list[int]) -> None:
    whole = assembled([text])
    assert assembled(cut_into(text, sizes)) == whole
    assert all(len(part) <= LIMIT for part in whole[2])


@settings(max_examples=40, deadline=None)
@given(document, document, st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=20))
def test_resplitting_what_resumes_a_message_does_not_change_it(before: str, after: str, sizes: list[int]) -> None:
    resume = Resume(SentMessage(1), assembled([before])[0])
    full, _, parts = resumed = assembled(cut_into(after, sizes), resume)
    assert resumed == assembled([after], resume)
    assert full.startswith(resume.text) and all(len(part) <= LIMIT for part in parts)


async def test_each_write_says_what_it_is() -> None:
    """Streaming text goes out interim (a first send must go out, an edit may be skipped);
    split heads final; the last message's final text is the one closing write."""
    text = "\n\n".join(f"Paragraph {i}: " + "words follow words. " * 6 for i in range(6))
    chunks = [scripted_text(p) for p in pieces(text, 7)] + [scripted_done(reason="length")]
    result, sink, _, _ = await drive(chunks, gap=0.05, delivery_args={"limit": 300})
    writes = [op for op in sink.ops if op.kind in ("send", "edit")]
    assert len(result.messages) >= 3 and writes
    for op in writes:
        assert op.write is not None
        assert (op.write.stage == "interim") == op.content.endswith(STREAMING_INDICATOR)
        assert op.write.may_skip == (op.write.stage == "interim" and op.kind == "edit")
    assert [op for op in writes if op.write.stage == "closing"] == [writes[-1]]
    assert writes[-1].message_id == result.messages[-1].id and writes[-1].write.ending is not None
    finals = [op for op in writes if op.write.stage == "final"]
    assert {op.message_id for op in finals} == {m.id for m in result.messages[:-1]}


async def test_a_given_back_resumed_message_is_a_final_write() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)
    old = await sink.send("Earlier text")
    delivery = MessageDelivery(sink, clock=clock, resume=Resume(old, "Earlier text"))

    async def scenario() -> None:
        delivery.append(" and more")
        await clock.sleep(2)
        await delivery.retract()

    await clock.run(scenario())
    last = sink.ops[-1]
    assert (last.kind, last.content, last.write.stage if last.write else None) == ("edit", "Earlier text", "final")
