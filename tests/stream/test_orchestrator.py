"""run_stream routing and outcomes: calls, errors, interrupts, usage, robustness."""

from __future__ import annotations

import asyncio
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.types import ProcessedChunk, ThoughtLogEntry, Usage
from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from stream.interrupt import Interrupt
from stream.orchestrator import DEFAULT_LIMITS, run_stream
from tests.support.drive_stream import (
    drive,
    pieces,
    scripted_call,
    scripted_done,
    scripted_error,
    scripted_text,
    stream_into,
)
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink


async def test_parallel_function_calls_are_all_collected_in_order():
    chunks = [
        scripted_text("Let me check."),
        scripted_call("get_time", zone="UTC"),
        scripted_call("roll_dice", sides=6),
        scripted_call("read_channel", limit=5),
        scripted_done(reason="tool_calls"),
    ]
    result, sink, _, script = await drive(chunks)
    assert result.status == "function_call"
    assert [c.name for c in result.function_calls] == ["get_time", "roll_dice", "read_channel"]
    assert result.function_calls[1].args == {"sides": 6}
    assert script.yielded == len(chunks)  # drained past the first call
    assert sink.texts() == ["Let me check."] and result.finish_reason == "tool_calls"


async def test_the_done_chunk_brings_usage_and_finish_reason():
    usage = Usage(input_tokens=100, output_tokens=50, reasoning_tokens=30, cached_input_tokens=40, total_tokens=150)
    result, *_ = await drive([scripted_text("Hi"), scripted_done(usage=usage, reason="length")])
    assert result.usage == usage and result.finish_reason == "length"


async def test_empty_response_when_nothing_visible_arrives():
    result, sink, _, _ = await drive([scripted_text("<think>only thinking</think>"), scripted_text("  \n"), scripted_done()])
    assert result.status == "empty_response"
    assert sink.ops == [] and result.messages == []
    assert result.captured_blocks[0].text == "only thinking"


async def test_stop_mid_stream_keeps_what_was_said():
    text = "".join(f"token{i} " for i in range(40))
    chunks = [scripted_text(p) for p in pieces(text, 7)] + [scripted_done()]
    interrupt = Interrupt()

    clock = VirtualClock()

    async def stop_later():
        await clock.sleep(2.05)  # chunks arrive every 0.1 s: 20 of them by then
        interrupt.fire("stop")

    async def scenario():
        presser = asyncio.ensure_future(stop_later())
        outcome = await stream_into(chunks, clock, MemorySink(clock, latency=0.05), gap=0.1, interrupt=interrupt)
        await presser
        return outcome

    result, sink, _, script = await clock.run(scenario())
    said = "".join(pieces(text, 7)[:20])
    assert result.status == "interrupted" and result.interrupted == "stop"
    assert result.text == said and sink.texts() == [said.strip()]
    assert script.closed and script.yielded == 20


async def test_an_interrupt_fired_before_a_chunk_is_seen_at_the_next_chunk():
    interrupt = Interrupt()
    interrupt.fire("follow_up")
    assert not interrupt.fire("stop")  # the first reason wins
    result, sink, _, script = await drive([scripted_text("first "), scripted_text("second"), scripted_done()],
                                          interrupt=interrupt)
    assert result.status == "interrupted" and result.interrupted == "follow_up"
    assert result.text == "" and script.yielded == 0 and sink.ops == []


async def test_an_error_is_returned_not_rendered_and_retract_deletes_the_partial_answer():
    text = "partial " * 300
    chunks = [scripted_text(p) for p in pieces(text, 40)] + [scripted_error()]
    result, sink, delivery, _ = await drive(chunks)
    assert result.status == "error" and result.error.type == "provider_overloaded"
    assert sink.embeds == {} and not any("interrupted" in t for t in sink.texts())
    assert len(sink.texts()) == 2 and not any(t.endswith(STREAMING_INDICATOR) for t in sink.texts())
    await sink.clock.run(delivery.retract())
    assert sink.texts() == [] and [op.kind for op in sink.ops].count("delete") == 2


async def test_an_error_before_any_text_posts_nothing():
    result, sink, _, _ = await drive([scripted_error("rate_limit", "429")])
    assert result.status == "error" and sink.ops == []


async def test_timeout_error_chunk_becomes_timeout():
    result, *_ = await drive([scripted_text("a"), scripted_error("timeout", "timeout")])
    assert result.status == "timeout" and result.error.kind == "timeout"


async def test_thoughts_and_serving_provider_are_recorded():
    chunks = [
        ProcessedChunk(type="text", content="", thoughts=[ThoughtLogEntry("raw", "step one, ", "openrouter")],
                       serving_provider=" minimax "),
        ProcessedChunk(type="text", content="Answer", thoughts=[ThoughtLogEntry("raw", "step two", "openrouter")],
                       serving_provider="other"),
        ProcessedChunk(type="done", thoughts=[ThoughtLogEntry("signature", "sig", "openrouter")]),
    ]
    result, *_ = await drive(chunks)
    assert result.thoughts == [
        ThoughtLogEntry("raw", "step one, step two", "openrouter"),
        ThoughtLogEntry("signature", "sig", "openrouter"),
    ]
    assert result.serving_provider == "minimax" and result.status == "completed"


async def test_it_never_raises_when_the_sink_misbehaves():
    class BrokenSink(MemorySink):
        async def edit(self, message, content, *, write):
            raise RuntimeError("sink bug")

    clock = VirtualClock()
    sink = BrokenSink(clock)
    chunks = [scripted_text(p) for p in pieces("some words " * 30, 11)] + [scripted_done()]
    result, sink, _, _ = await drive(chunks, gap=0.5, clock=clock, sink=sink)
    assert result.status == "completed"
    assert result.delivery_failure == "internal"


async def test_a_failing_chunk_iterator_becomes_an_error_result():
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def broken():
        yield scripted_text("before ")
        raise KeyError("adapter bug")

    delivery = MessageDelivery(sink, clock=clock)
    result = await clock.run(run_stream(broken(), delivery))
    assert result.status == "error" and result.error.code == "stream_internal"
    assert sink.texts() == ["before"]


async def test_streaming_indicator_shows_while_text_comes_and_is_removed_at_the_end():
    chunks = [scripted_text(f"w{i} ") for i in range(30)] + [scripted_done()]
    result, sink, _, _ = await drive(chunks, gap=0.4)
    contents = [op.content for op in sink.ops if op.kind in ("send", "edit")]
    assert all(c.endswith(STREAMING_INDICATOR) for c in contents[:-1])
    assert contents[-1] == result.text.strip()


async def test_tool_loop_can_continue_in_the_same_messages():
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)

    async def turn():
        first = await run_stream(
            _aiter([scripted_text("Checking the time. "), scripted_call("get_time"), scripted_done()]),
            delivery, keep_open_for_calls=True,
        )
        assert first.status == "function_call"
        assert sink.texts() == ["Checking the time." + STREAMING_INDICATOR]
        return await run_stream(_aiter([scripted_text("It is noon."), scripted_done()]), delivery)

    second = await clock.run(turn())
    assert second.status == "completed"
    assert sink.texts() == ["Checking the time. It is noon."]
    assert [op.kind for op in sink.ops].count("send") == 1


async def test_cancellation_still_removes_the_indicator():
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)

    async def endless():
        yield scripted_text("so far")
        await clock.sleep(1000)

    async def scenario():
        task = asyncio.ensure_future(run_stream(endless(), delivery))
        await clock.sleep(5)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"

    assert await clock.run(scenario()) == "cancelled"
    assert sink.texts() == ["so far"]


async def _aiter(chunks):
    for chunk in chunks:
        yield chunk


chunk_specs = st.lists(
    st.one_of(
        st.tuples(st.just("text"), st.sampled_from(["Hi", " there", "\n\n", "<think>t</think>", "x" * 70, " "])),
        st.tuples(st.just("call"), st.sampled_from(["a", "b", "c"])),
        st.tuples(st.just("usage"), st.integers(min_value=0, max_value=99)),
        st.tuples(st.just("error"), st.sampled_from(["timeout", "rate_limit", "api_error"])),
    ),
    max_size=25,
)


@settings(max_examples=120, deadline=None)
@given(chunk_specs)
def test_outcome_follows_the_chunks(specs):
    chunks, expected_calls, visible_before_error, error_kind, last_usage = [], [], [], None, None
    for kind, value in specs:
        if kind == "text":
            chunks.append(scripted_text(value))
        elif kind == "call":
            chunks.append(scripted_call(value))
        elif kind == "usage":
            chunks.append(scripted_done(usage=Usage(input_tokens=1, output_tokens=value)))
        else:
            chunks.append(scripted_error(value, value))
        if error_kind is None:
            if kind == "text":
                visible_before_error.append(value)
            elif kind == "call":
                expected_calls.append(value)
            elif kind == "usage":
                last_usage = value
            elif kind == "error":
                error_kind = value

    async def go():
        clock = VirtualClock(settle=20)
        return await drive(chunks, gap=0.3, clock=clock, sink=MemorySink(clock, latency=0.02),
                           delivery_args={"limit": 120})

    result, sink, _, _ = asyncio.run(go())
    visible = "".join(visible_before_error).replace("<think>t</think>", "")
    assert result.text == visible
    assert [c.name for c in result.function_calls] == expected_calls[:DEFAULT_LIMITS.max_calls]  # more are dropped
    if error_kind is not None:
        assert result.status == ("timeout" if error_kind == "timeout" else "error")
        assert result.error.type == error_kind
    elif expected_calls:
        assert result.status == "function_call"
    else:
        assert result.status == ("completed" if visible.strip() else "empty_response")
    if last_usage is not None:
        assert result.usage.output_tokens == last_usage
    assert sink.violations == 0 and sink.invalid == []
    shown = "".join(sink.texts())
    assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", visible)


async def test_an_interrupt_ends_a_silent_provider_at_once():
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)
    stop = Interrupt()
    closed = []

    async def thinking_silently():
        try:
            yield scripted_text("Let me think")
            await clock.sleep(600)  # a reasoning model sending nothing for ten minutes
            yield scripted_text(" never shown")
        finally:
            closed.append(True)

    async def scenario():
        async def press_stop():
            await clock.sleep(3)
            stop.fire("stop")

        presser = asyncio.ensure_future(press_stop())
        result = await run_stream(thinking_silently(), delivery, stop)
        await presser
        return result

    result = await clock.run(scenario())
    assert result.status == "interrupted" and result.interrupted == "stop" and clock.now() < 10
    assert sink.texts() == ["Let me think"] and closed == [True]


async def test_an_unfired_interrupt_changes_nothing_and_a_late_one_is_seen():
    interrupt = Interrupt()
    result, sink, _, _ = await drive([scripted_text("all "), scripted_text("of it"), scripted_done()], gap=0.5,
                                     interrupt=interrupt)
    assert result.status == "completed" and sink.texts() == ["all of it"] and result.interrupted is None
    interrupt.fire("shutdown")
    result, *_ = await drive([scripted_text("late")], gap=1.0, interrupt=interrupt)
    assert result.status == "interrupted" and result.interrupted == "shutdown" and result.text == ""
