"""Turn streamed text into Discord messages: one reply, then coalesced, paced edits.

`MessageDelivery` composes the two halves of that job: `AnswerText` (`stream/answer_text.py`)
knows what the messages show (blocks captured, splits, the streaming view, a resumed
message's text) and never waits; `Publisher` (`stream/publisher.py`) puts it on the sink
(the editor task, pacing, retries, notes). `append()` is synchronous and cheap (it runs once
per chunk); the editor renders only when an edit is due, always the newest text. Past the
message limit it finishes the message at the splitter's boundary (a mandatory final edit)
and continues in a new one. `finish()` delivers the final state of every message (never
skipped: it waits for budget instead) and removes the streaming indicator; `retract()`
deletes everything this delivery posted.

Every sink call says what it writes (`stream.sink.Write`): streaming text is interim, a
split head is final, and the final delivery of the answer's last message is the closing
write carrying the `Ending` `finish` was given, so a sink can put the answer's final
controls on that one request instead of making another. `Resume` starts from an existing
last message (Continue): new text is appended to what it shows and split exactly as one
delivery would.
"""

from __future__ import annotations

import logging

from stream.answer_text import AnswerText, Cut, Resume
from stream.capture import CapturedBlock
from stream.clock import Clock, MonotonicClock
from stream.pacing import EditBudget
from stream.publisher import Publisher
from stream.sink import (
    FINAL,
    INTERIM,
    INTERIM_EDIT,
    EmbedSpec,
    Ending,
    MessageSink,
    SentMessage,
    Write,
)
from stream.splitter import DISCORD_MESSAGE_LIMIT

__all__ = ["MessageDelivery", "Resume", "STREAMING_INDICATOR"]

log = logging.getLogger(__name__)

STREAMING_INDICATOR = " ▌"
MAX_MESSAGES = 10  # one answer never floods a channel with more messages than this
RETRY_BUDGET_SECONDS = 30.0  # how long one send or edit is retried while Discord fails
REPAIR_BUDGET_SECONDS = 600.0  # how long a given-up final text is tried again in the background
BACKOFF_SECONDS = 1.0


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
        self._clock: Clock = clock or MonotonicClock()
        self._limit = limit
        self._max_messages = max(1, max_messages)
        self._text = AnswerText(limit=limit, indicator=indicator, capture_blocks=capture_blocks, resume=resume)
        self._publisher = Publisher(sink, clock=self._clock, budget=budget or EditBudget(),
                                    retry_budget=retry_budget, backoff=backoff, resume=resume)
        self._finished = False
        self._ending: Ending | None = None  # how the answer ended, as `finish` was told
        self.overflowed = False  # the answer reached `max_messages`; later text is not shown

    # -- what the orchestrator and the turn read -------------------------------------

    @property
    def text(self) -> str:
        """The visible text this delivery streamed (think and details blocks removed).

        A resumed delivery's `text` is only the new text, what this stream's model said;
        `full_text` adds the resumed message's text before it."""
        return self._text.new

    @property
    def full_text(self) -> str:
        """The resumed message's text followed by `text` (just `text` without `Resume`)."""
        return self._text.full

    @property
    def blocks(self) -> list[CapturedBlock]:
        """Think and details blocks taken out of the text."""
        return self._text.blocks

    @property
    def messages(self) -> list[SentMessage]:
        """Messages currently holding the answer, in order."""
        return self._publisher.messages

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def clock(self) -> Clock:
        """The clock this answer is paced by (shared with whoever bounds the stream)."""
        return self._clock

    @property
    def failure(self) -> str | None:
        """Why delivery gave up, if it did."""
        return self._publisher.failure

    @property
    def operations(self) -> int:
        """Sink calls made (sends, edits, embeds)."""
        return self._publisher.operations

    @property
    def skipped_edits(self) -> int:
        """Interim edits the sink refused for budget (SinkBusy), sent later."""
        return self._publisher.skipped_edits

    # -- feeding ------------------------------------------------------------------------

    def append(self, text: str) -> None:
        """Add streamed text; never waits on Discord."""
        if self._finished or self.overflowed or not text:
            return
        if self._text.append(text) and self.failure is None:
            self._publisher.wake(self._stream)

    async def finish(self, *, note: str | None = None, ending: Ending | None = None) -> None:
        """Deliver the final text of every message, the last one's closing write carrying
        `ending` (how the answer ended); optionally append an italic note."""
        if not self._finished:
            self._finished = True
            self._ending = ending  # a later note re-applies it (`add_note`)
            self._text.close_blocks()
            await self._publisher.stop_editor()
            await self._final_pump("final delivery failed")
        if note:
            await self.add_note(note)

    async def flush(self) -> None:
        """Bring Discord up to date now, indicator kept: more text may follow (tool loop)."""
        if self._finished or self.failure is not None:
            return
        await self._publisher.stop_editor(restart=True)
        try:
            await self._pump(final=False)
        except Exception:  # noqa: BLE001 - delivery never raises into the turn
            log.exception("flushing delivery failed")
            self._publisher.failure = "internal"

    async def add_note(self, note: str, *, ending: Ending | None = None) -> None:
        """Mark the answer (e.g. interrupted, or its sources line); only when something was
        posted; a second note goes under the first, the same note is not added twice.

        The note's delivery is the closing write of the last message and carries `ending`,
        or else the `Ending` the delivery finished with, again (the answer's final edit
        may not have had it: one cut at its message limit ended while streaming). A note
        that needs a message of its own carries it only when no earlier message did, so
        the answer's final controls are never on two messages."""
        if self._finished:
            await self._publisher.add_note(note, ending or self._ending, limit=self._limit)

    async def repair(self, budget: float = REPAIR_BUDGET_SECONDS) -> bool:
        """Discord failed past the retry budget: try again, for longer, to land the final
        text (and remove the indicator); True when the answer is now shown in full."""
        if self.failure != "unavailable" or not self._finished:
            return self.failure is None
        self._publisher.give_more_time(budget)
        await self._final_pump("repairing delivery failed")
        return self.failure is None

    async def send_embed(self, embed: EmbedSpec) -> SentMessage | None:
        """Post an embed (an error) after the text, as a reply when nothing else was posted."""
        return await self._publisher.send_embed(embed)

    async def retract(self) -> None:
        """Delete every message of this answer (a retry supersedes it); a resumed message
        is not this delivery's: it gets its own text back instead."""
        self._finished = True
        await self._publisher.retract()

    # -- bringing Discord up to date ------------------------------------------------------

    async def _stream(self) -> None:
        await self._pump(final=False)

    async def _final_pump(self, what: str) -> None:
        if self.failure is not None:
            return
        try:
            await self._pump(final=True)
        except Exception:  # noqa: BLE001 - delivery never raises into the turn
            log.exception(what)
            self._publisher.failure = "internal"

    async def _pump(self, *, final: bool) -> None:
        """Bring Discord up to date: finish overgrown messages, then one edit.

        The text is rendered only once an edit is due (sizes decide the rest)."""
        publisher = self._publisher
        while self.failure is None and not self.overflowed:
            cut = self._text.due_cut(final=final)
            if cut is not None:
                if not await self._end_message(cut, final=final):
                    return
                continue
            mandatory = final or publisher.open.message is None
            if not mandatory and await publisher.waited_for_turn():
                continue  # newer text may have arrived while waiting
            display = self._text.render(final=final)
            if not display or display == publisher.open.shown:
                return
            write = self._closing() if final else INTERIM if mandatory else INTERIM_EDIT
            if await publisher.deliver(display, write, mandatory=mandatory, segment=publisher.open) \
                    or not publisher.skipped:
                return
            # Skipped for budget: wait as hinted, then send the newest text instead.

    async def _end_message(self, cut: Cut, *, final: bool) -> bool:
        """The open message ends at `cut` with its final text; the next one starts after
        it, unless this was the last allowed (then the answer is what was shown). False
        when delivering the head gave up."""
        publisher = self._publisher
        last = publisher.ended_messages + 1 >= self._max_messages
        # Final, the head is the answer's last message when nothing follows it.
        write = self._closing() if final and (last or cut.rest_empty) else FINAL
        if cut.head and cut.head != publisher.open.shown:
            if not await publisher.deliver(cut.head, write, mandatory=True, segment=publisher.open):
                return False
        if last:
            self.overflowed = True
            self._text.keep_until(cut)
            return False
        self._text.open_next(cut)
        publisher.next_message()
        return True

    def _closing(self) -> Write:
        return Write.closing(self._ending)
