"""Turn streamed text into Discord messages: one reply, then coalesced, paced edits.

`append()` is synchronous and cheap (it runs once per chunk); a background editor task
does all talking to the sink, so a slow Discord never slows the model stream. The
editor renders only when an edit is due, always the newest text, with at most one
operation in flight. Past the message limit it finishes the message at the splitter's
boundary (a mandatory final edit) and continues in a new one. `finish()` delivers the
final state of every message (never skipped: it waits for budget instead) and removes
the streaming indicator; `retract()` deletes everything this delivery posted.

The final delivery of the answer's last message is marked `closing_operation()` (a split
head is not), and finishing calls run inside the `Ending` the caller gave
(`answer_ending`), so a sink can put the answer's final controls on that one request
instead of making another. `Resume` starts from an existing last message (Continue):
new text is appended to what it shows and split exactly as one delivery would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from stream.capture import BlockCapture, CapturedBlock
from stream.clock import Clock, MonotonicClock
from stream.pacing import EditBudget
from stream.sink import (
    EmbedSpec,
    Ending,
    MessageGone,
    MessageSink,
    SentMessage,
    SinkBusy,
    SinkError,
    SinkForbidden,
    SinkUnavailable,
    answer_ending,
    closing_operation,
    current_ending,
    interim_operation,
)
from stream.splitter import (
    DISCORD_MESSAGE_LIMIT,
    LOOKAHEAD,
    fence_closer,
    open_fence,
    split_message,
)

log = logging.getLogger(__name__)

STREAMING_INDICATOR = " ▌"
MAX_MESSAGES = 10  # one answer never floods a channel with more messages than this
RETRY_BUDGET_SECONDS = 30.0  # how long one send or edit is retried while Discord fails
REPAIR_BUDGET_SECONDS = 600.0  # how long a given-up final text is tried again in the background
BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 8.0
GONE_ATTEMPTS = 3  # a message deleted again and again: the channel is hostile, stop


@dataclass(slots=True)
class _Segment:
    """One Discord message of the answer."""

    message: SentMessage | None = None
    shown: str = ""  # the content Discord has now


@dataclass(frozen=True, slots=True)
class Resume:
    """An answer's existing last message and the text it shows: a delivery made with it
    appends to that message (Continue) instead of posting a first one, and splits as one
    delivery of `text` + the new text would. The message counts among the delivery's
    `max_messages`; `retract()` gives it `text` back instead of deleting it."""

    message: SentMessage
    text: str


class MessageDelivery:
    """Streams one answer into a `MessageSink` (see module docstring)."""

    def __init__(
        self,
        sink: MessageSink,
        *,
        clock: Clock | None = None,
        budget: EditBudget | None = None,
        limit: int = DISCORD_MESSAGE_LIMIT,
        indicator: str = STREAMING_INDICATOR,
        capture_blocks: bool = True,
        max_messages: int = MAX_MESSAGES,
        retry_budget: float = RETRY_BUDGET_SECONDS,
        backoff: float = BACKOFF_SECONDS,
        resume: Resume | None = None,
    ) -> None:
        self._sink = sink
        self._clock: Clock = clock or MonotonicClock()
        self._budget = budget or EditBudget()
        self._limit = limit
        self._indicator = indicator
        self._capture = BlockCapture() if capture_blocks else None
        self._max_messages = max(1, max_messages)
        self._retry_budget = retry_budget
        self._backoff = backoff
        self._parts: list[str] = []
        self._length = 0
        self._seg_start = 0  # where the open segment's text starts in the visible text
        self._prefix = ""  # fence reopener shown before that text
        self._done: list[_Segment] = []
        self._seg = _Segment()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._in_flight: asyncio.Future[None] | None = None
        self._retry_at = 0.0
        self._busy_until = 0.0  # an interim edit was skipped for budget: the next one not before
        self._skipped = False
        self._closing = False
        self._finished = False
        self._notes: list[str] = []  # notes added under the answer, in order
        self._ending: Ending | None = None  # how the answer ended, as `finish` was told
        self._ended_on: SentMessage | None = None  # the message a closing delivery gave the Ending
        self._resume = resume
        self._resumed = 0  # characters of the visible text the resumed message showed
        if resume is not None:  # as if this delivery had shown that text in that message
            self._seg = _Segment(resume.message, resume.text)
            if resume.text:
                self._parts.append(resume.text)
                self._length = self._resumed = len(resume.text)
        self.overflowed = False  # the answer reached `max_messages`; later text is not shown
        self.failure: str | None = None  # why delivery gave up, if it did
        self.operations = 0  # sink calls made (sends, edits, embeds)
        self.skipped_edits = 0  # interim edits the sink refused for budget (SinkBusy), sent later

    # -- what the orchestrator and the turn read -------------------------------------

    @property
    def text(self) -> str:
        """The visible text this delivery streamed (think and details blocks removed).

        A resumed delivery's `text` is only the new text, what this stream's model said;
        `full_text` adds the resumed message's text before it."""
        visible = self._visible()
        return visible[self._resumed :] if self._resumed else visible

    @property
    def full_text(self) -> str:
        """The resumed message's text followed by `text` (just `text` without `Resume`)."""
        return self._visible()

    @property
    def blocks(self) -> list[CapturedBlock]:
        """Think and details blocks taken out of the text."""
        return list(self._capture.blocks) if self._capture else []

    @property
    def messages(self) -> list[SentMessage]:
        """Messages currently holding the answer, in order."""
        return [s.message for s in (*self._done, self._seg) if s.message is not None]

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def clock(self) -> Clock:
        """The clock this answer is paced by (shared with whoever bounds the stream)."""
        return self._clock

    # -- feeding ------------------------------------------------------------------------

    def append(self, text: str) -> None:
        """Add streamed text; never waits on Discord."""
        if self._finished or self.overflowed or not text:
            return
        if self._capture is not None:
            text = self._capture.feed(text)
            if not text:
                return
        self._parts.append(text)
        self._length += len(text)
        if self.failure is not None:
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    async def finish(self, *, note: str | None = None) -> None:
        """Deliver the final text of every message; optionally append an italic note."""
        if not self._finished:
            self._finished = True
            self._ending = current_ending()  # a later note re-applies it (`add_note`)
            if self._capture is not None:
                tail = self._capture.flush()
                if tail:
                    self._parts.append(tail)
                    self._length += len(tail)
            await self._stop_editor()
            if self.failure is None:
                try:
                    await self._pump(final=True)
                except Exception:  # noqa: BLE001 - delivery never raises into the turn
                    log.exception("final delivery failed")
                    self.failure = "internal"
        if note:
            await self.add_note(note)

    async def flush(self) -> None:
        """Bring Discord up to date now, indicator kept: more text may follow (tool loop)."""
        if self._finished or self.failure is not None:
            return
        await self._stop_editor()
        self._task, self._closing = None, False
        try:
            await self._pump(final=False)
        except Exception:  # noqa: BLE001 - delivery never raises into the turn
            log.exception("flushing delivery failed")
            self.failure = "internal"

    async def add_note(self, note: str) -> None:
        """Mark the answer (e.g. interrupted, or its sources line); only when something was
        posted; a second note goes under the first, the same note is not added twice.

        The note's delivery is the closing one of the last message and carries the
        `Ending` the delivery finished with again (the answer's final edit may not have
        had it: one cut at its message limit ended while streaming). A note that needs a
        message of its own carries it only when no earlier message did, so the answer's
        final controls are never on two messages."""
        if note in self._notes or self.failure is not None or not self.messages or not self._finished:
            return
        self._notes.append(note)
        seg = next(s for s in reversed((*self._done, self._seg)) if s.message is not None)
        combined = f"{seg.shown}\n\n{note}" if seg.shown else note
        ending = current_ending() or self._ending
        if len(combined) <= self._limit:
            with answer_ending(ending):
                await self._deliver(combined, mandatory=True, segment=seg, closing=True)
        else:
            self._done.append(self._seg)
            self._seg = _Segment()
            with answer_ending(None if self._ended_on is not None else ending):
                await self._deliver(note, mandatory=True, segment=self._seg, closing=True)

    async def repair(self, budget: float = REPAIR_BUDGET_SECONDS) -> bool:
        """Discord failed past the retry budget: try again, for longer, to land the final
        text (and remove the indicator); True when the answer is now shown in full."""
        if self.failure != "unavailable" or not self._finished:
            return self.failure is None
        self.failure, self._retry_budget = None, budget
        try:
            with answer_ending(self._ending):
                await self._pump(final=True)
        except Exception:  # noqa: BLE001 - delivery never raises into the turn
            log.exception("repairing delivery failed")
            self.failure = "internal"
        return self.failure is None

    async def send_embed(self, embed: EmbedSpec) -> SentMessage | None:
        """Post an embed (an error) after the text, as a reply when nothing else was posted."""
        await self._wait_budget(mandatory=True)
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
        """Delete every message of this answer (a retry supersedes it); a resumed message
        is not this delivery's: it gets its own text back instead."""
        self._finished = True
        await self._stop_editor()
        resumed = self._resume.message if self._resume is not None else None
        for seg in (*self._done, self._seg):
            if seg.message is None:
                continue
            try:
                if seg.message == resumed and self._resume is not None:
                    if seg.shown != self._resume.text:
                        await self._sink.edit(seg.message, self._resume.text)
                else:
                    await self._sink.delete(seg.message)
            except MessageGone:
                pass
            except Exception:  # noqa: BLE001 - keep deleting the others
                log.warning("could not delete a superseded message", exc_info=True)
            seg.message, seg.shown = None, ""

    # -- the editor ---------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while not self._closing:
                await self._wake.wait()
                self._wake.clear()
                if self._closing or self.failure is not None:
                    return
                await self._pump(final=False)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a bug here must not kill the turn
            log.exception("streaming delivery failed")
            self.failure = "internal"

    async def _stop_editor(self) -> None:
        self._closing = True
        task = self._task
        if task is None or task.done():
            return
        while self._in_flight is not None and not task.done():
            await asyncio.shield(self._in_flight)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _pump(self, *, final: bool) -> None:
        """Bring Discord up to date: finish overgrown messages, then one edit.

        The text is rendered only once an edit is due (sizes decide the rest)."""
        while self.failure is None and not self.overflowed:
            size = len(self._prefix) + self._length - self._seg_start
            if size > self._limit and (final or size >= self._limit + LOOKAHEAD):
                split = split_message(self._content(), self._limit)
                if split is None:  # pragma: no cover - size > limit guarantees a split
                    return
                head = split.head.strip()
                start = self._seg_start + max(0, split.cut - len(self._prefix))
                last = len(self._done) + 1 >= self._max_messages
                # Final, the head is the answer's last message when nothing follows it.
                closing = final and (last or not self._visible()[start:].strip())
                if head and head != self._seg.shown:
                    if not await self._deliver(head, mandatory=True, segment=self._seg, closing=closing):
                        return
                self._seg_start = start
                if last:
                    self._overflow()
                    return
                self._prefix = split.reopen
                self._done.append(self._seg)
                self._seg = _Segment()
                continue
            mandatory = final or self._seg.message is None
            if not mandatory:
                now = self._clock.now()
                delay = max(self._budget.delay(now), self._retry_at - now, self._busy_until - now)
                if delay > 0:
                    await self._clock.sleep(delay)
                    continue  # newer text may have arrived while waiting
            display = self._render(self._content(), final=final)
            if not display or display == self._seg.shown:
                return
            self._skipped = False
            if await self._deliver(display, mandatory=mandatory, segment=self._seg, closing=final) \
                    or not self._skipped:
                return
            # Skipped for budget: wait as hinted, then send the newest text instead.

    def _overflow(self) -> None:
        """The last allowed message is full and final: the answer is what was shown."""
        self.overflowed = True
        kept = self._visible()[: self._seg_start]
        self._parts[:] = [kept] if kept else []
        self._length = len(kept)
        self._wake.set()

    def _render(self, content: str, *, final: bool) -> str:
        """The final text, or the streaming view: an open fence closed so the code
        renders as code while it grows, then the indicator."""
        if final:
            return content.strip()
        shown = content.rstrip()
        if not shown.strip():
            return ""
        fence = open_fence(shown)
        closer = fence_closer(fence) if fence is not None else ""
        room = self._limit - len(self._indicator) - len(closer)
        return shown[:room].strip() + closer + self._indicator

    async def _deliver(self, content: str, *, mandatory: bool, segment: _Segment,
                       closing: bool = False) -> bool:
        """One send or edit, retried per the sink's answer; False when it gave up;
        `closing` marks it (and its retries) `closing_operation()`.

        While Discord fails (5xx, network) a mandatory operation is retried with growing
        pauses for up to `retry_budget` seconds, so a burst of errors does not cost the
        answer; an interim edit just waits for the next one. A sink refusing an interim edit
        for budget (`SinkBusy`) is no failure: the edit is skipped and `_pump` sends the
        newer text once the hinted pause is over."""
        if closing:
            with closing_operation():
                delivered = await self._deliver(content, mandatory=mandatory, segment=segment)
            if delivered and current_ending() is not None:
                self._ended_on = segment.message
            return delivered
        gone = failures = 0
        started = self._clock.now()
        while True:
            if mandatory:
                await self._wait_budget(mandatory=True)
                now = self._clock.now()
                if self._retry_at > now:
                    await self._clock.sleep(self._retry_at - now)
            try:
                await self._operate(content, segment, interim=not mandatory)
                return True
            except MessageGone:
                # Deleted under us: the same content goes out as a new message, paced.
                segment.message, segment.shown = None, ""
                gone, mandatory = gone + 1, True
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
                    self._skipped = True
                    return False
                # Only interim calls may be refused; should a sink refuse anyway, wait as asked.
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

    async def _operate(self, content: str, segment: _Segment, *, interim: bool) -> None:
        """Send the segment's first version or edit it; counted, observed, one in flight.

        An interim edit is marked so (`interim_operation`): the sink may refuse it for budget."""
        self._budget.start(self._clock.now())
        went_out = True
        self.operations += 1
        self._in_flight = asyncio.get_running_loop().create_future()
        try:
            if segment.message is None:
                segment.message = await self._sink.send(content, reply=not self.messages)
            elif interim:
                with interim_operation():
                    await self._sink.edit(segment.message, content)
            else:
                await self._sink.edit(segment.message, content)
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

    async def _wait_budget(self, *, mandatory: bool) -> None:
        while True:
            delay = self._budget.delay(self._clock.now(), mandatory=mandatory)
            if delay <= 0:
                return
            await self._clock.sleep(delay)

    def _observe(self) -> None:
        try:
            info = self._sink.rate_limit()
        except Exception:  # noqa: BLE001 - headers are advisory
            return
        self._budget.observe(info, self._clock.now())

    # -- text ---------------------------------------------------------------------------

    def _visible(self) -> str:
        parts = self._parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def _content(self) -> str:
        return self._prefix + self._visible()[self._seg_start :]
