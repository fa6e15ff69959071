"""Every bound of one answer ends an endless or hostile stream (virtual clock)."""

from __future__ import annotations

from providers.types import ProcessedChunk, ThoughtLogEntry
from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from stream.limits import StreamLimits
from stream.orchestrator import run_stream
from stream.sink import SinkUnavailable
from tests.support.drive_stream import drive, scripted_call, scripted_done, scripted_text
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink

TIGHT = StreamLimits(first_content_seconds=5, idle_seconds=10, total_seconds=60, max_calls=3, max_thought_chars=100)


def endless(clock: VirtualClock, piece: str, gap: float):
    async def chunks():
        while True:
            await clock.sleep(gap)
            yield scripted_text(piece)
    return chunks()


async def test_an_endless_stream_ends_at_the_total_deadline_with_its_text_kept():
    clock = VirtualClock()
    sink = MemorySink(clock)
    delivery = MessageDelivery(sink, clock=clock)
    result = await clock.run(run_stream(endless(clock, "word ", 1.0), delivery, limits=TIGHT))
    assert result.status == "interrupted" and result.interrupted == "deadline"
    assert 60 <= clock.now() < 70
    assert result.text.startswith("word word") and sink.texts() == [result.text.strip()]
    assert not any(t.endswith(STREAMING_INDICATOR) for t in sink.texts())


async def test_a_stream_of_keep_alives_only_times_out_at_the_first_content_deadline():
    clock = VirtualClock()

    async def silent():  # keep-alive comments produce no chunk at all
        await clock.sleep(3600)
        yield scripted_text("never")

    sink = MemorySink(clock)
    result = await clock.run(run_stream(silent(), MessageDelivery(sink, clock=clock), limits=TIGHT))
    assert result.status == "timeout" and result.error.code == "first_content_deadline"
    assert result.error.retryable and result.error.kind == "timeout"
    assert clock.now() < 6 and sink.ops == []


async def test_silence_after_content_times_out_at_the_idle_deadline():
    clock = VirtualClock()

    async def stalls():
        yield scripted_text("started ")
        await clock.sleep(3600)
        yield scripted_text("late")

    sink = MemorySink(clock)
    result = await clock.run(run_stream(stalls(), MessageDelivery(sink, clock=clock), limits=TIGHT))
    assert result.status == "timeout" and result.error.code == "content_idle_deadline"
    assert 10 <= clock.now() < 12 and result.text == "started "


async def test_an_answer_stops_at_its_message_limit_and_stops_reading():
    clock = VirtualClock()
    text = "".join(f"sentence {i} is here. " for i in range(3000))  # about 60,000 characters
    chunks = [scripted_text(text[i : i + 500]) for i in range(0, len(text), 500)] + [scripted_done()]
    result, sink, delivery, script = await drive(chunks, gap=0.05, clock=clock,
                                                 delivery_args={"max_messages": 3})
    assert result.cut_at == "messages" and delivery.overflowed
    assert len(sink.texts()) == 3 and all(len(t) <= 2000 for t in sink.texts())
    assert script.closed and script.yielded < len(chunks) / 2  # the provider was not read to the end
    assert text.startswith(result.text) and result.text.strip()
    assert "".join(sink.texts()).replace(" ", "") == result.text.replace(" ", "")


async def test_tool_calls_per_response_are_bounded():
    calls = [scripted_call(f"tool{i}") for i in range(50)]
    result, *_ = await drive([*calls, scripted_done(reason="tool_calls")], limits=TIGHT)
    assert [c.name for c in result.function_calls] == ["tool0", "tool1", "tool2"]


async def test_kept_reasoning_is_bounded_to_its_tail_and_says_so():
    chunks = [ProcessedChunk(type="text", content="", thoughts=[ThoughtLogEntry("raw", f"<{i:03d}>", "deepseek")])
              for i in range(200)] + [scripted_text("answer"), scripted_done()]
    result, *_ = await drive(chunks, limits=TIGHT)
    kept = "".join(t.text for t in result.thoughts)
    assert len(kept) <= 100 and kept.endswith("<199>") and result.thoughts_cut


async def test_a_discord_503_burst_longer_than_three_tries_still_lands_the_final_text():
    clock = VirtualClock()
    sink = MemorySink(clock)
    sink.fail("send", SinkUnavailable("503"), times=6)  # retried with growing pauses, over 20 s in all
    result, sink, delivery, _ = await drive([scripted_text("All of it."), scripted_done()], clock=clock, sink=sink,
                                            delivery_args={"retry_budget": 40.0})
    assert delivery.failure is None and sink.texts() == ["All of it."]
    assert [op.kind for op in sink.ops] == ["send"] and 20 <= clock.now() < 40


async def test_discord_down_past_the_retry_budget_gives_up_and_says_why():
    clock = VirtualClock()
    sink = MemorySink(clock)
    sink.fail("send", SinkUnavailable("503"), times=1000)
    result, sink, delivery, _ = await drive([scripted_text("Nobody will see this."), scripted_done()], clock=clock,
                                            sink=sink)
    assert delivery.failure == "unavailable" and result.delivery_failure == "unavailable"
    assert 20 <= clock.now() <= 40


async def test_a_final_text_given_up_during_an_outage_lands_once_discord_recovers():
    clock = VirtualClock()
    sink = MemorySink(clock)

    async def outage_then_repair():
        delivery = MessageDelivery(sink, clock=clock)

        async def chunks():
            yield scripted_text("Half")
            await clock.sleep(1.0)
            sink.fail("edit", SinkUnavailable("503"), times=12)  # longer than the 30 s budget
            yield scripted_text(" and the rest.")
            yield scripted_done()

        result = await run_stream(chunks(), delivery)
        given_up = (result.delivery_failure, list(sink.texts()))
        repaired = await delivery.repair()
        return given_up, repaired, delivery

    (failure, shown), repaired, delivery = await clock.run(outage_then_repair())
    # Given up after the retry budget, the indicator still showing...
    assert failure == "unavailable" and shown[0].endswith(STREAMING_INDICATOR)
    # ...and repaired in the background once Discord answers again: full text, no indicator.
    assert repaired and delivery.failure is None and sink.texts() == ["Half and the rest."]


async def test_the_time_to_first_content_counts_reasoning_but_not_an_empty_chunk():
    clock = VirtualClock()

    async def thinks_first():
        await clock.sleep(1.5)
        yield scripted_text("")  # a role-only delta shows nothing
        await clock.sleep(2.0)
        yield ProcessedChunk(type="text", content="", thoughts=[ThoughtLogEntry("raw", "hm", "openai")])
        await clock.sleep(1.0)
        yield scripted_text("answer")

    result = await clock.run(run_stream(thinks_first(), MessageDelivery(MemorySink(clock), clock=clock),
                                        limits=TIGHT))
    assert result.text == "answer" and result.first_content_seconds == 3.5

    async def fails_at_once():
        await clock.sleep(1.0)
        yield ProcessedChunk(type="error", error=None)

    failed = await clock.run(run_stream(fails_at_once(), MessageDelivery(MemorySink(clock), clock=clock),
                                        limits=TIGHT))
    assert failed.status == "error" and failed.first_content_seconds is None
