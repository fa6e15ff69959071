"""Answer controls in the stream layer: closing marks, the answer's Ending, regenerating
into the old messages (ReusingSink) and continuing the last one (Resume)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.tools.loop import ToolLoop
from bot.tools.registry import ToolRegistry
from providers.types import ChatRequest, FunctionCall, Message, ProcessedChunk, ThoughtLogEntry
from stream.buffer import STREAMING_INDICATOR, MessageDelivery, Resume
from stream.interrupt import Interrupt
from stream.limits import StreamLimits
from stream.orchestrator import StreamResult, run_stream
from stream.reuse import ReusingSink
from stream.sink import FINAL, Ending, MessageGone, SentMessage, Write
from tests.support.drive_stream import drive, pieces, scripted_done, scripted_text
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink, Op

UNBOUNDED = StreamLimits(first_content_seconds=1e9, idle_seconds=1e9, total_seconds=1e9)


def writes(sink: MemorySink) -> list[Op]:
    return [op for op in sink.ops if op.kind in ("send", "edit")]


def closing(sink: MemorySink) -> list[Op]:
    return [op for op in writes(sink) if op.closing]


# -- closing marks and the Ending --------------------------------------------------------


async def test_only_the_last_messages_final_delivery_is_closing_and_knows_the_ending() -> None:
    text = "\n\n".join(f"Paragraph {i}: " + "words follow words. " * 6 for i in range(8))
    chunks = [scripted_text(p) for p in pieces(text, 7)] + [scripted_done(reason="length")]
    result, sink, _, _ = await drive(chunks, gap=0.01, delivery_args={"limit": 300}, limits=UNBOUNDED)
    assert len(result.messages) >= 3
    [last] = closing(sink)
    assert last.message_id == result.messages[-1].id
    assert last.ending == Ending("length", reasoning=False, interrupted=None)
    assert not last.content.endswith(STREAMING_INDICATOR)
    assert last is writes(sink)[-1]
    # Split heads went out final but not closing, and without the ending's marker.
    heads = [op for op in writes(sink) if op.message_id != last.message_id and not op.content.endswith(
        STREAMING_INDICATOR)]
    assert heads and all(not op.closing for op in heads)
    assert all(op.ending is None for op in writes(sink) if op is not last)


async def test_a_final_split_makes_the_last_part_closing_not_the_head() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock, limit=100)

    async def scenario() -> None:
        delivery.append("a" * 60)
        await clock.sleep(1)
        delivery.append(" " + "b" * 60)  # over the limit, not past its lookahead: split at the end
        await delivery.finish(ending=Ending("stop", reasoning=False))

    await clock.run(scenario())
    assert sink.texts() == ["a" * 60, "b" * 60]
    head, tail = writes(sink)[-2:]
    assert (head.content, head.closing) == ("a" * 60, False)
    assert (tail.content, tail.closing, tail.ending) == ("b" * 60, True, Ending("stop", False))


async def test_reasoning_is_thoughts_or_captured_blocks() -> None:
    thought = ProcessedChunk(type="text", content="Answer.",
                             thoughts=[ThoughtLogEntry("raw", "thinking…", "openai")])
    _, sink, _, _ = await drive([thought, scripted_done()])
    assert closing(sink)[-1].ending == Ending("stop", reasoning=True)
    _, sink, _, _ = await drive([scripted_text("<think>hmm</think>Answer."), scripted_done()])
    assert closing(sink)[-1].ending == Ending("stop", reasoning=True)
    _, sink, _, _ = await drive([scripted_text("Answer."), scripted_done()])
    assert closing(sink)[-1].ending == Ending("stop", reasoning=False)


async def test_a_stopped_answer_ends_with_the_interrupt_reason() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)
    interrupt = Interrupt()

    async def chunks():
        yield scripted_text("Counting: one two")
        await clock.sleep(1)
        interrupt.fire("stop")
        await clock.sleep(100)
        yield scripted_text(" never")

    async def scenario() -> StreamResult:
        return await run_stream(chunks(), MessageDelivery(sink, clock=clock), interrupt, limits=UNBOUNDED)

    result = await clock.run(scenario())
    assert result.status == "interrupted"
    [last] = closing(sink)
    assert last.ending == Ending(None, reasoning=False, interrupted="stop")
    assert sink.texts() == ["Counting: one two"]


async def test_a_note_reapplies_the_ending_on_the_last_message_but_not_in_a_message_of_its_own() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)
    ending = Ending("stop", reasoning=True, interrupted="deadline")

    async def scenario() -> None:
        delivery.append("Short answer")
        await delivery.finish(ending=ending)
        await delivery.add_note("*note*")  # without one: the delivery remembers how it ended

    await clock.run(scenario())
    note = writes(sink)[-1]
    assert (note.content, note.closing, note.ending) == ("Short answer\n\n*note*", True, ending)

    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)

    async def full() -> None:
        delivery.append("y" * 1995)
        await delivery.finish(note="*interrupted*", ending=ending)

    await clock.run(full())
    own = writes(sink)[-1]
    assert (own.kind, own.content, own.closing, own.ending) == ("send", "*interrupted*", True, None)


async def test_an_answer_cut_at_its_message_limit_gets_the_ending_with_its_note() -> None:
    text = " ".join(f"word{i}" for i in range(200))
    chunks = [scripted_text(p) for p in pieces(text, 10)] + [scripted_done()]
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def scenario() -> None:
        delivery = MessageDelivery(sink, clock=clock, limit=200, max_messages=2)

        async def feed():
            for chunk in chunks:
                yield chunk

        await run_stream(feed(), delivery, limits=UNBOUNDED)
        assert delivery.overflowed
        await delivery.add_note("*too long*")

    await clock.run(scenario())
    note = writes(sink)[-1]
    assert note.closing and note.ending is not None and not note.ending.reasoning
    assert note.content.endswith("*too long*")
    # The cut came while streaming: the note's delivery is the only one with the ending.
    assert [op for op in writes(sink) if op.ending is not None] == [note]


async def test_the_tool_loop_finishes_a_stopped_answer_inside_its_ending() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)
    interrupt = Interrupt()

    async def scenario() -> StreamResult:
        delivery = MessageDelivery(sink, clock=clock)
        delivery.append("Let me look that up.")
        await delivery.flush()
        result = StreamResult(status="function_call", text=delivery.text, finish_reason="tool_calls",
                              function_calls=[FunctionCall(name="roll", args={})])
        interrupt.fire("stop")
        request = ChatRequest(messages=[Message("user", "hi")])
        return await ToolLoop(ToolRegistry()).run(object(), request, result, delivery, interrupt)

    result = await clock.run(scenario())
    assert (result.status, result.interrupted) == ("interrupted", "stop")
    last = writes(sink)[-1]
    assert (last.content, last.closing) == ("Let me look that up.", True)
    assert last.ending == Ending("tool_calls", reasoning=False, interrupted="stop")


# -- Regenerate: ReusingSink -------------------------------------------------------------


async def _deliver(sink, clock: VirtualClock, text: str, *, limit: int = 150, size: int = 0,
                   **delivery_args) -> MessageDelivery:
    delivery = MessageDelivery(sink, clock=clock, limit=limit, **delivery_args)
    for part in pieces(text, size or len(text) or 1):
        delivery.append(part)
        await clock.sleep(0.05)
    await delivery.finish()
    return delivery


async def test_regenerate_edits_the_old_parts_then_deletes_the_surplus() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def scenario() -> list[SentMessage]:
        old = await _deliver(sink, clock, " ".join(["old"] * 100), limit=100)
        await clock.sleep(10)
        reuse = ReusingSink(sink, old.messages)
        new = await _deliver(reuse, clock, "fresh and short")
        assert new.messages == old.messages[:1]  # the first old part, edited
        assert reuse.leftover() == old.messages[1:]
        await reuse.remove_leftover()
        assert reuse.leftover() == []
        return old.messages

    old_messages = await clock.run(scenario())
    assert len(old_messages) >= 3
    assert sink.texts() == ["fresh and short"]
    assert [op.kind for op in sink.ops].count("send") == len(old_messages)  # only the old answer posted


async def test_regenerate_skips_a_deleted_old_part_and_posts_past_the_old_ones() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def scenario() -> tuple[list[SentMessage], list[SentMessage]]:
        old = await _deliver(sink, clock, " ".join(["old"] * 60), limit=100)
        sink.delete_by_user(old.messages[0].id)
        await clock.sleep(10)
        reuse = ReusingSink(sink, old.messages)
        new = await _deliver(reuse, clock, " ".join(["new"] * 80), limit=100)
        await reuse.remove_leftover()
        return old.messages, new.messages

    old, new = await clock.run(scenario())
    assert new[: len(old) - 1] == old[1:]  # the deleted part was skipped, the others reused in order
    assert len(new) > len(old) - 1  # then new messages
    assert all(len(t) <= 100 for t in sink.texts())


async def test_a_gone_leftover_is_fine() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)
    parts = [SentMessage(1), SentMessage(2)]
    sink.fail("delete", MessageGone("gone"))

    async def scenario() -> None:
        reuse = ReusingSink(sink, parts)
        await reuse.remove_leftover()

    await clock.run(scenario())


document = st.lists(
    st.one_of(
        st.text(alphabet="abc .\n", min_size=1, max_size=120),
        st.just("```py\nprint(1)\nprint(2)\n```\n"),
        st.just("x" * 90),
    ),
    min_size=1,
    max_size=12,
).map("".join)


def chunked(text: str, sizes: list[int]) -> list[str]:
    out, position, index = [], 0, 0
    while position < len(text):
        size = sizes[index % len(sizes)]
        out.append(text[position : position + size])
        position, index = position + size, index + 1
    return out


class CountingSink(MemorySink):
    """Records the most text messages alive at once."""

    peak = 0

    def _mark(self) -> None:
        self.peak = max(self.peak, len(self.texts()))

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        sent = await super().send(content, reply=reply, write=write)
        self._mark()
        return sent


async def _fresh(text: str, parts: list[str], gap: float) -> list[str]:
    clock = VirtualClock(settle=20)
    sink = MemorySink(clock, latency=0.03)
    await drive([scripted_text(p) for p in parts] + [scripted_done()], gap=gap, clock=clock, sink=sink,
                delivery_args={"limit": 150}, limits=UNBOUNDED)
    return sink.texts()


@settings(max_examples=40, deadline=None)
@given(document, document, st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=20),
       st.sampled_from([0.0, 0.05, 0.7]))
def test_a_regenerated_answer_ends_as_a_fresh_one_whatever_the_chunking(old_text, new_text, sizes, gap):
    async def regenerated() -> tuple[list[str], int, int, int]:
        clock = VirtualClock(settle=20)
        sink = CountingSink(clock, latency=0.03)

        async def scenario() -> tuple[int, int]:
            old = await _deliver(sink, clock, old_text)
            await clock.sleep(10)
            sink.peak = len(sink.texts())
            reuse = ReusingSink(sink, old.messages)
            delivery = MessageDelivery(reuse, clock=clock, limit=150)

            async def feed():
                for part in chunked(new_text, sizes):
                    await clock.sleep(gap)
                    yield scripted_text(part)
                yield scripted_done()

            await run_stream(feed(), delivery, limits=UNBOUNDED)
            await reuse.remove_leftover()
            return len(old.messages), len(delivery.messages)

        olds, news = await clock.run(scenario())
        assert sink.invalid == []
        return sink.texts(), olds, news, sink.peak

    texts, olds, news, peak = asyncio.run(regenerated())
    assert texts == asyncio.run(_fresh(new_text, [new_text], 0.0))
    assert peak <= max(olds, news) and len(texts) == news


# -- Continue: Resume --------------------------------------------------------------------


async def test_a_resumed_delivery_appends_to_the_last_message() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def scenario() -> MessageDelivery:
        first = await _deliver(sink, clock, "The story begins")
        [last] = first.messages
        await clock.sleep(10)
        return await _deliver(sink, clock, " and goes on.", resume=Resume(last, "The story begins"))

    delivery = await clock.run(scenario())
    assert sink.texts() == ["The story begins and goes on."]
    assert [op.kind for op in sink.ops].count("send") == 1
    assert delivery.text == " and goes on." and delivery.full_text == "The story begins and goes on."
    streaming = [op.content for op in writes(sink)][2:-1]  # after the first answer's send and final edit
    assert streaming and all(c.endswith(STREAMING_INDICATOR) for c in streaming)


async def test_retracting_a_resumed_delivery_gives_the_message_its_text_back() -> None:
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def scenario() -> None:
        first = await _deliver(sink, clock, "Kept text")
        await clock.sleep(10)
        delivery = MessageDelivery(sink, clock=clock, limit=40, resume=Resume(first.messages[0], "Kept text"))
        delivery.append(" then a continuation long enough to need a message of its own, surely")
        await delivery.finish()
        assert len(sink.texts()) == 3 and sink.texts()[0].startswith("Kept text then")
        await delivery.retract()

    await clock.run(scenario())
    assert sink.texts() == ["Kept text"]


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abc .\n", min_size=1, max_size=150).map(str.strip).filter(bool), document,
       st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=20),
       st.sampled_from([0.0, 0.05, 0.7]))
def test_resume_and_new_text_end_as_one_delivery_of_both(old_text, new_text, sizes, gap):
    async def resumed() -> list[str]:
        clock = VirtualClock(settle=20)
        sink = MemorySink(clock, latency=0.03)

        async def scenario() -> None:
            message = await sink.send(old_text)
            await clock.sleep(10)
            delivery = MessageDelivery(sink, clock=clock, limit=150, resume=Resume(message, old_text))

            async def feed():
                for part in chunked(new_text, sizes):
                    await clock.sleep(gap)
                    yield scripted_text(part)
                yield scripted_done()

            result = await run_stream(feed(), delivery, limits=UNBOUNDED)
            assert result.text == delivery.text == new_text

        await clock.run(scenario())
        assert sink.invalid == []
        return sink.texts()

    assert asyncio.run(resumed()) == asyncio.run(_fresh(old_text + new_text, [old_text + new_text], 0.0))
