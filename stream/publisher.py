"""Put an answer's messages on the sink: one operation at a time, paced, retried.

This is the side of a delivery that talks to Discord (through a `MessageSink`) and so
waits; the text it publishes comes from `stream/answer_text.py`. A background editor task
runs the delivery's pump whenever new text arrives, so a slow Discord never slows the
model stream, with at most one operation in flight. Interim edits wait for the channel's
budget (`EditBudget`, fed by the sink's rate-limit headers) and may be refused by the
sink (`SinkBusy`: skipped, the newer text follows); mandatory ones (a first send, a final
text) wait for budget instead and are retried while Discord fails, for up to a retry
budget, so a burst of errors does not cost the answer. Each operation tells the sink what
it writes (`Write`). Notes go under the answer's last message as its closing write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from stream.answer_text import Resume
from stream.clock import Clock
from stream.pacing import EditBudget
from stream.sink import (
    FINAL,
    EmbedSpec,
    Ending,
    MessageGone,
    MessageSink,
    SentMessage,
    SinkBusy,
    SinkError,
    SinkForbidden,
    SinkUnavailable,
    Write,
)

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 8.0
GONE_ATTEMPTS = 3  # a message deleted again and again: the channel is hostile, stop


@dataclass(slots=True)
class Segment:
    """One Discord message of the answer."""

    message: SentMessage | None = None
    shown: str = ""  # the content Discord has now


class Publisher:
    """The answer's messages on one sink, and the editor task that keeps them current."""

    def __init__(self, sink: MessageSink, *, clock: Clock, budget: EditBudget, retry_budget: float,
                 backoff: float, resume: Resume | None = None) -> None:
        self._sink = sink
        self._clock = clock
        self._budget = budget
        self._retry_budget = retry_budget
        self._backoff = backoff
        self._resume = resume
        self._done: list[Segment] = []
        self.open = Segment(resume.message, resume.text) if resume is not None else Segment()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._in_flight: asyncio.Future[None] | None = None
        self._retry_at = 0.0
        self._busy_until = 0.0  # an interim edit was skipped for budget: the next one not before
        self.skipped = False  # the last delivery was an interim edit the sink refused for budget
        self._notes: list[str] = []  # notes added under the answer, in order
        self._ended_on: SentMessage | None = None  # the message a closing write gave the Ending
        self.failure: str | None = None  # why publishing gave up, if it did
        self.operations = 0  # sink calls made (sends, edits, embeds)
        self.skipped_edits = 0  # interim edits the sink refused for budget (SinkBusy), sent later

    @property
    def messages(self) -> list[SentMessage]:
        """Messages currently holding the answer, in order."""
        return [s.message for s in (*self._done, self.open) if s.message is not None]

    @property
    def ended_messages(self) -> int:
        """Messages before the open one (complete, final)."""
        return len(self._done)

    def next_message(self) -> None:
        """The open message is complete: later text goes to a new one."""
        self._done.append(self.open)
        self.open = Segment()

    # -- the editor ---------------------------------------------------------------------

    def wake(self, pump: Callable[[], Awaitable[None]]) -> None:
        """New text: the editor task (started on first use) runs `pump` when it is free."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(pump))
        self._wake.set()

    async def _run(self, pump: Callable[[], Awaitable[None]]) -> None:
        try:
            while not self._closing:
                await self._wake.wait()
                self._wake.clear()
                if self._closing or self.failure is not None:
                    return
                await pump()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a bug here must not kill the turn
            log.exception("streaming delivery failed")
            self.failure = "internal"

    async def stop_editor(self, *, restart: bool = False) -> None:
        """End the editor task after its operation in flight; with `restart` a later
        `wake` starts a new one (the reply stays open: more text may follow)."""
        self._closing = True
        task = self._task
        if task is not None and not task.done():
            while self._in_flight is not None and not task.done():
                await asyncio.shield(self._in_flight)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if restart:
            self._task, self._closing = None, False

    # -- pacing and delivery ----------------------------------------------------------------

    async def waited_for_turn(self) -> bool:
        """Before an interim edit: sleep while the budget, a retry pause or a refusal says
        so; True when it slept (newer text may have arrived meanwhile)."""
        now = self._clock.now()
        delay = max(self._budget.delay(now), self._retry_at - now, self._busy_until - now)
        if delay <= 0:
            return False
        await self._clock.sleep(delay)
        return True

    def give_more_time(self, budget: float) -> None:
        """A given-up final text is tried again (`MessageDelivery.repair`), for longer."""
        self.failure, self._retry_budget = None, budget

    async def deliver(self, content: str, write: Write, *, mandatory: bool, segment: Segment) -> bool:
        """One send or edit, retried per the sink's answer; False when it gave up.

        While Discord fails (5xx, network) a mandatory operation is retried with growing
        pauses for up to `retry_budget` seconds; an interim edit just waits for the next
        one. A sink refusing an interim edit for budget (`SinkBusy`) is no failure: the
        edit is skipped (`skipped`) and the caller sends newer text after the pause."""
        self.skipped = False
        delivered = await self._attempts(content, write, mandatory=mandatory, segment=segment)
        if delivered and write.ending is not None:
            self._ended_on = segment.message
        return delivered

    async def _attempts(self, content: str, write: Write, *, mandatory: bool, segment: Segment) -> bool:
        gone = failures = 0
        started = self._clock.now()
        while True:
            if mandatory:
                await self._wait_budget()
                now = self._clock.now()
                if self._retry_at > now:
                    await self._clock.sleep(self._retry_at - now)
            try:
                await self._operate(content, write, segment)
                return True
            except MessageGone:
                # Deleted under us: the same content goes out as a new message, paced.
                segment.message, segment.shown = None, ""
                gone, mandatory = gone + 1, True
                write = replace(write, may_skip=False)  # a new message must go out
                if gone >= GONE_ATTEMPTS:
                    self.failure = "gone"
                    return False
            except SinkUnavailable:
                failures += 1
                self._retry_at = self._clock.now() + min(self._backoff * 2 ** (failures - 1), MAX_BACKOFF_SECONDS)
                if not mandatory:
                    return False
                if self._retry_at - started > self._retry_budget:
                    self.failure = "unavailable"
                    return False
            except SinkBusy as exc:
                self._busy_until = self._clock.now() + exc.retry_after
                if not mandatory:
                    self.skipped_edits += 1
                    self.skipped = True
                    return False
                # Only skippable writes may be refused; should a sink refuse anyway, wait as asked.
                if self._busy_until - started > self._retry_budget:
                    self.failure = "unavailable"
                    return False
                await self._clock.sleep(exc.retry_after)
            except SinkForbidden:
                self.failure = "forbidden"
                return False
            except SinkError as exc:
                log.warning("delivery failed: %s", type(exc).__name__)
                self.failure = "sink_error"
                return False

    async def _operate(self, content: str, write: Write, segment: Segment) -> None:
        """Send the segment's first version or edit it; counted, observed, one in flight."""
        self._budget.start(self._clock.now())
        went_out = True
        self.operations += 1
        self._in_flight = asyncio.get_running_loop().create_future()
        try:
            if segment.message is None:
                segment.message = await self._sink.send(content, reply=not self.messages, write=write)
            else:
                await self._sink.edit(segment.message, content, write=write)
            segment.shown = content
        except SinkBusy:
            self._budget.forget()  # nothing went out: the channel's slot is still free
            self.operations -= 1
            went_out = False
            raise
        finally:
            if went_out:  # perhaps after waiting: it counts from when it came back
                self._budget.settle(self._clock.now())
            future, self._in_flight = self._in_flight, None
            if future is not None and not future.done():
                future.set_result(None)
            self._observe()

    async def _wait_budget(self) -> None:
        while True:
            delay = self._budget.delay(self._clock.now(), mandatory=True)
            if delay <= 0:
                return
            await self._clock.sleep(delay)

    def _observe(self) -> None:
        try:
            info = self._sink.rate_limit()
        except Exception:  # noqa: BLE001 - headers are advisory
            return
        self._budget.observe(info, self._clock.now())

    # -- after the answer ---------------------------------------------------------------

    async def add_note(self, note: str, ending: Ending | None, *, limit: int) -> None:
        """Mark the answer under its last message (see `MessageDelivery.add_note`)."""
        if note in self._notes or self.failure is not None or not self.messages:
            return
        self._notes.append(note)
        seg = next(s for s in reversed((*self._done, self.open)) if s.message is not None)
        combined = f"{seg.shown}\n\n{note}" if seg.shown else note
        if len(combined) <= limit:
            await self.deliver(combined, Write.closing(ending), mandatory=True, segment=seg)
        else:
            self.next_message()
            own = None if self._ended_on is not None else ending  # the final controls once
            await self.deliver(note, Write.closing(own), mandatory=True, segment=self.open)

    async def send_embed(self, embed: EmbedSpec) -> SentMessage | None:
        """Post an embed (an error) after the text, as a reply when nothing else was posted."""
        await self._wait_budget()
        self._budget.start(self._clock.now())
        self.operations += 1
        try:
            return await self._sink.send_embed(embed, reply=not self.messages)
        except Exception:  # noqa: BLE001 - the embed is best effort; the result says what happened
            log.warning("could not post the embed", exc_info=True)
            return None
        finally:
            self._budget.settle(self._clock.now())
            self._observe()

    async def retract(self) -> None:
        """Delete every message of this answer; a resumed message gets its text back."""
        await self.stop_editor()
        resume = self._resume
        for seg in (*self._done, self.open):
            if seg.message is None:
                continue
            try:
                if resume is not None and seg.message == resume.message:
                    if seg.shown != resume.text:
                        await self._sink.edit(seg.message, resume.text, write=FINAL)
                else:
                    await self._sink.delete(seg.message)
            except MessageGone:
                pass
            except Exception:  # noqa: BLE001 - keep deleting the others
                log.warning("could not delete a superseded message", exc_info=True)
            seg.message, seg.shown = None, ""
