"""Delivery into the in-memory sink: splitting, pacing, capture, faults, indicator."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from stream.capture import BlockCapture
from stream.limits import StreamLimits
from stream.pacing import ChannelBudgets
from stream.sink import MessageGone, SinkForbidden, SinkUnavailable
from stream.splitter import split_all
from tests.support.drive_stream import (
    FENCE_LINE,
    drive,
    pieces,
    scripted_done,
    scripted_text,
    squash,
    stream_into,
)
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink


def long_answer() -> str:
    prose = "The quick brown fox jumps over the lazy dog, again and again. " * 30
    code = "\n".join(f"    total += compute(item_{i})  # step {i}" for i in range(90))
    tail = "\n\n".join(f"Paragraph {i}: " + "words follow words here. " * 12 for i in range(6))
    return f"{prose}\n\nHere is the code:\n\n```python\ndef run():\n{code}\n```\n\n{tail}"


async def test_fast_6000_character_stream_with_a_code_fence():
    text = long_answer()
    assert len(text) > 6000
    chunks = [scripted_text(p) for p in pieces(text, 9)] + [scripted_done()]
    result, sink, _, _ = await drive(chunks, gap=0.002)
    messages = sink.texts()
    assert result.status == "completed" and result.text == text
    assert len(messages) >= 4
    assert all(len(m) <= 2000 for m in messages)
    assert all(len(FENCE_LINE.findall(m)) % 2 == 0 for m in messages)
    assert squash("\n".join(messages)) == squash(text)
    assert not any(m.endswith(STREAMING_INDICATOR) for m in messages)
    assert sink.violations == 0 and sink.invalid == []
    reopened = [m for m in messages if m.startswith("```python\n")]
    assert reopened, "the fence was cut and reopened with its language"
    # Exactly what the splitter makes of the whole text: streaming changed nothing.
    assert messages == [p.strip() for p in split_all(text)]


async def test_first_text_is_sent_as_a_reply_at_once():
    chunks = [scripted_text("Hello"), scripted_text(" there"), scripted_done()]
    result, sink, _, _ = await drive(chunks, gap=0.5)
    first = sink.ops[0]
    assert (first.kind, first.reply, first.time, first.content) == ("send", True, 0.5, "Hello" + STREAMING_INDICATOR)
    assert [op.message_id for op in sink.ops if op.kind == "send"][:1] == [m.id for m in result.messages[:1]]
    assert sink.texts() == ["Hello there"]


async def test_slow_stream_gives_steady_edits_inside_the_budget():
    words = [f"word{i} " for i in range(100)]  # one chunk every 0.2 s: a 20-second stream
    result, sink, _, _ = await drive([scripted_text(w) for w in words] + [scripted_done()], gap=0.2)
    edits = [op for op in sink.ops if op.kind == "edit"]
    assert sink.violations == 0
    assert sink.edits_per_window(5.0) <= 5
    assert len(edits) >= 14  # steady: about one edit per 1.3 s over 20 s
    gaps = [b.time - a.time for a, b in zip(edits, edits[1:], strict=False)]
    assert max(gaps) < 2.0
    assert all(op.content.endswith(STREAMING_INDICATOR) for op in edits[:-1])
    assert sink.texts() == ["".join(words).strip()] and result.status == "completed"


async def test_no_rate_limit_headers_uses_the_conservative_budget():
    clock = VirtualClock()
    sink = MemorySink(clock, latency=0.01, report_headers=False)
    text = long_answer() * 2
    result, sink, _, _ = await drive(
        [scripted_text(p) for p in pieces(text, 5)] + [scripted_done()], gap=0.001, clock=clock, sink=sink
    )
    assert sink.violations == 0 and sink.edits_per_window(5.0) <= 5
    assert squash("\n".join(sink.texts())) == squash(text)


async def test_think_and_details_blocks_never_reach_discord():
    chunks = [
        scripted_text("Sure. <thi"), scripted_text("nk>secret plan"), scripted_text(" more secret</think>Answer"),
        scripted_text(" part <details><summary>hidden</summary>private notes"),
        scripted_text("</details> end."), scripted_done(),
    ]
    result, sink, _, _ = await drive(chunks, gap=1.5)
    for op in sink.ops:
        if op.content:
            assert "secret" not in op.content and "private" not in op.content
            assert "<" not in op.content
    assert sink.texts() == ["Sure. Answer part  end."]
    assert [b.kind for b in result.captured_blocks] == ["think", "details"]


async def test_edit_answered_message_gone_continues_in_a_new_message():
    clock = VirtualClock()
    sink = MemorySink(clock, latency=0.05)
    text = "".join(f"sentence {i}. " for i in range(60))
    chunks = [scripted_text(p) for p in pieces(text, 20)] + [scripted_done()]
    sink.fail("edit", MessageGone("deleted"), times=1)
    result, sink, _, _ = await drive(chunks, gap=0.3, clock=clock, sink=sink)
    assert sink.texts() == [text.strip()]
    assert result.delivery_failure is None and len(result.messages) == 1


async def test_message_deleted_by_a_user_mid_stream_loses_no_text():
    clock = VirtualClock()
    sink = MemorySink(clock, latency=0.05)
    text = "".join(f"part {i} " for i in range(80))
    chunks = [scripted_text(p) for p in pieces(text, 16)]

    async def deleter():
        await clock.sleep(3.0)
        sink.delete_by_user(next(iter(sink.contents)))

    async def both():
        outcome, _ = await asyncio.gather(
            stream_into(chunks + [scripted_done()], clock, sink, gap=0.25), deleter()
        )
        return outcome

    result, sink, _, _ = await clock.run(both())
    assert sink.texts() == [text.strip()]
    assert len(sink.ops) > 2 and [op.kind for op in sink.ops].count("send") == 2


async def test_discord_5xx_is_retried_and_the_text_kept():
    clock = VirtualClock()
    sink = MemorySink(clock)
    sink.fail("edit", SinkUnavailable("503"), times=2)
    text = "alpha beta gamma delta " * 10
    result, sink, _, _ = await drive(
        [scripted_text(p) for p in pieces(text, 10)] + [scripted_done()], gap=0.4, clock=clock, sink=sink
    )
    assert sink.texts() == [text.strip()] and result.delivery_failure is None


async def test_forbidden_channel_is_reported_not_raised():
    clock = VirtualClock()
    sink = MemorySink(clock)
    sink.fail("send", SinkForbidden("403"))
    result, sink, _, _ = await drive([scripted_text("hello"), scripted_done()], clock=clock, sink=sink)
    assert result.status == "completed" and result.delivery_failure == "forbidden"
    assert sink.texts() == []


STEADY = "steady words arrive " * 120


async def replies_in_one_channel(replies: int, clock: VirtualClock, sink: MemorySink) -> None:
    """`replies` answers of STEADY streaming at once into the sink's channel, one budget."""
    budgets = ChannelBudgets()

    async def one():
        return await stream_into(
            [scripted_text(p) for p in pieces(STEADY, 12)] + [scripted_done()], clock, sink, gap=0.05,
            delivery_args={"budget": budgets.for_channel(sink.channel_id)},
        )

    await asyncio.gather(*(one() for _ in range(replies)))


async def test_two_replies_in_one_channel_share_its_budget():
    clock = VirtualClock()
    sink = MemorySink(clock, latency=0.02)
    await clock.run(replies_in_one_channel(2, clock, sink))
    assert sink.violations == 0
    assert sorted(len(t) for t in sink.texts()) == sorted(len(p) for p in 2 * _split(STEADY))


def _split(text: str) -> list[str]:
    return [p.strip() for p in split_all(text)]


async def test_retract_deletes_every_message():
    text = "x " * 1500
    result, sink, delivery, _ = await drive([scripted_text(p) for p in pieces(text, 50)] + [scripted_done()])
    assert len(sink.texts()) == 2
    await sink.clock.run(delivery.retract())
    assert sink.texts() == [] and delivery.messages == []


async def test_note_that_does_not_fit_goes_to_its_own_message():
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)

    async def scenario():
        delivery.append("y" * 1995)
        await delivery.finish(note="*interrupted*")

    await clock.run(scenario())
    assert sink.texts() == ["y" * 1995, "*interrupted*"]


document = st.lists(
    st.one_of(
        st.text(alphabet="abc .\n", min_size=1, max_size=120),
        st.just("```py\nprint(1)\nprint(2)\n```\n"),
        st.just("| a | b |\n|---|---|\n| 1 | 2 |\n"),
        st.just("<think>hidden</think>"),
        st.just("x" * 90),
    ),
    min_size=1,
    max_size=14,
).map("".join)


# Chunking is the only thing that changes here: no bound of the answer may cut it.
UNBOUNDED = StreamLimits(first_content_seconds=1e9, idle_seconds=1e9, total_seconds=1e9)


@settings(max_examples=60, deadline=None)
@given(document, st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=30),
       st.sampled_from([0.0, 0.05, 0.7]))
def test_final_messages_do_not_depend_on_chunking(text, sizes, gap):
    def chunked() -> list[str]:
        out, position, index = [], 0, 0
        while position < len(text):
            size = sizes[index % len(sizes)]
            out.append(text[position : position + size])
            position, index = position + size, index + 1
        return out

    def final_messages(parts: list[str]) -> list[str]:
        async def go():
            clock = VirtualClock(settle=20)
            sink = MemorySink(clock, latency=0.03)
            await drive(
                [scripted_text(p) for p in parts] + [scripted_done()], gap=gap, clock=clock, sink=sink,
                delivery_args={"limit": 150}, limits=UNBOUNDED,  # a 1-character trickle outlasts any deadline
            )
            assert sink.violations == 0 and sink.invalid == []
            return sink.texts()

        return asyncio.run(go())

    capture = BlockCapture()
    visible = capture.feed(text) + capture.flush()
    expected = [p.strip() for p in split_all(visible, 150) if p.strip()]
    assert final_messages(chunked()) == final_messages([text]) == expected


async def test_an_open_code_fence_renders_closed_while_streaming():
    chunks = [scripted_text("Code:\n```py\n"), scripted_text("x = 1\n"), scripted_text("y = 2\n"),
              scripted_text("```\nDone"), scripted_done()]
    result, sink, _, _ = await drive(chunks, gap=1.5)
    streaming = [op.content for op in sink.ops if op.kind in ("send", "edit")][:-1]
    assert "Code:\n```py\nx = 1\n```" + STREAMING_INDICATOR in streaming
    assert all(len(FENCE_LINE.findall(c)) % 2 == 0 for c in streaming)
    assert sink.texts() == ["Code:\n```py\nx = 1\ny = 2\n```\nDone"]


async def test_mentions_in_model_text_are_delivered_unchanged():
    text = "@everyone look, <@123> and <@&456> said hi"
    result, sink, _, _ = await drive([scripted_text(text), scripted_done()])
    assert sink.texts() == [text]  # the sink's allowed_mentions, not rewriting, stops pings



@settings(max_examples=40, deadline=None)
@given(
    holds=st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.5, 3.0, 6.0, 9.0]), min_size=1, max_size=60),
    replies=st.integers(min_value=1, max_value=5),
    headers=st.booleans(),
)
def test_operations_held_before_they_leave_stay_inside_the_channel_budget(holds, replies, headers):
    """A request that waits before it leaves (for the global budget) counts from when it
    arrived: a window counted from when it was asked would close before Discord's."""
    clock = VirtualClock()
    sink = MemorySink(clock, latency=0.02, report_headers=headers)
    sink.holds.extend(holds)
    asyncio.run(clock.run(replies_in_one_channel(replies, clock, sink)))
    assert sink.violations == 0
    assert sorted(len(t) for t in sink.texts()) == sorted(len(p) for p in replies * _split(STEADY))
