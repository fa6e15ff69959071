"""A sink whose budget is tight refuses interim edits (`SinkBusy`): the delivery skips them,
without counting a failure or backing off as for an outage, sends the newest text later,
and never loses a first message or a final edit."""

from __future__ import annotations

from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from stream.sink import FINAL, SentMessage, SinkBusy, Write
from tests.support.drive_stream import drive, pieces, scripted_done, scripted_text
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink


class TightSink(MemorySink):
    """Refuses every interim edit until `tight_until` (virtual seconds), as the global
    budget does when others wait; first messages and final edits always go through."""

    def __init__(self, clock: VirtualClock, *, tight_until: float, retry_after: float = 0.5) -> None:
        super().__init__(clock, latency=0.05)
        self.tight_until = tight_until
        self.retry_after = retry_after
        self.refused: list[tuple[float, str]] = []

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        if write.may_skip and self.clock.now() < self.tight_until:
            self.refused.append((self.clock.now(), content))
            raise SinkBusy("budget tight", retry_after=self.retry_after)
        await super().edit(message, content, write=write)


def shown_over_time(sink: MemorySink, message_id: int) -> list[str]:
    return [op.content.removesuffix(STREAMING_INDICATOR) for op in sink.ops
            if op.message_id == message_id and op.kind in ("send", "edit")]


async def test_interim_edits_are_skipped_while_tight_and_the_final_is_exact() -> None:
    clock = VirtualClock()
    sink = TightSink(clock, tight_until=6.0)
    words = [f"word{i} " for i in range(50)]  # one chunk every 0.2 s: a 10-second stream
    result, sink, delivery, _ = await drive([scripted_text(w) for w in words] + [scripted_done()],
                                            gap=0.2, clock=clock, sink=sink)
    text = "".join(words).strip()
    assert result.status == "completed" and result.delivery_failure is None
    assert sink.texts() == [text] and sink.violations == 0
    assert sink.refused and delivery.skipped_edits == len(sink.refused)
    edits = [op for op in sink.ops if op.kind == "edit"]
    assert all(op.time >= 6.0 for op in edits)  # none got through while tight
    assert len(edits) >= 2  # interim edits resumed once there was room, then the final
    # Fewer edits, never a stale one: each shows at least what the one before showed.
    shown = shown_over_time(sink, result.messages[0].id)
    assert all(later.startswith(earlier.rstrip()) for earlier, later in zip(shown, shown[1:], strict=False))
    assert delivery.operations == len(sink.ops)  # refused edits are not counted as sent


async def test_a_skipped_edit_is_no_outage_the_final_goes_at_once() -> None:
    """Tight for the whole stream: only the first message and the final edit go out, and the
    final is not held back by an outage's backoff."""
    clock = VirtualClock()
    sink = TightSink(clock, tight_until=1_000.0, retry_after=0.3)
    chunks = [scripted_text(p) for p in pieces("steady words arrive " * 20, 7)] + [scripted_done()]
    result, sink, delivery, _ = await drive(chunks, gap=0.1, clock=clock, sink=sink)
    assert result.delivery_failure is None and delivery.skipped_edits > 0
    assert [op.kind for op in sink.ops] == ["send", "edit"]
    final = sink.ops[-1]
    stream_end = 0.1 * len(chunks)
    assert final.content == ("steady words arrive " * 20).strip()
    assert final.time <= stream_end + 1.0  # no growing 1-2-4-8 s pauses as for a 5xx


async def test_flush_brings_discord_up_to_date_after_a_skipped_edit() -> None:
    """The tool loop flushes before running tools: a refused edit is sent again, newest text."""
    clock = VirtualClock()
    sink = TightSink(clock, tight_until=2.0, retry_after=0.5)
    delivery = MessageDelivery(sink, clock=clock)

    async def scenario() -> None:
        delivery.append("Let me look that up.")
        await clock.sleep(1.0)
        delivery.append(" Searching now")
        await delivery.flush()

    await clock.run(scenario())
    assert sink.refused and sink.texts() == ["Let me look that up. Searching now" + STREAMING_INDICATOR]
    assert delivery.failure is None
