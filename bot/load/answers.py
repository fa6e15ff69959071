"""The answers in progress: what `/stop`, a newer question, the per-member cap and
shutdown act on, and the answers this process showed lately.

An answer is registered the moment its question is admitted — before it waits for a
turn, downloads files or opens a thread — and leaves when its last bookkeeping is done,
so every one of those steps is visible and interruptible. Each running answer has its
own `Interrupt`; several can run in one channel at once (different members, or one
member in several threads), so nothing here is keyed by channel alone.

Read your own writes: which messages make an answer is written to the database in a
batch after the answer ends; until then (and for a while after) this process answers
that question itself, from the parts on screen while it streams and from the finished
record after (`holding`). The same goes for what an answer's buttons need (who asked,
the finish reason, the reasoning: `facts_of`) and whether a newer answer continued it
(`continued`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from bot.load.config_cache import Lru
from bot.repo.answer_records import AnswerFacts
from bot.repo.conversation import RecordedAnswer
from stream.buffer import MessageDelivery
from stream.interrupt import Interrupt, InterruptReason

MAX_RECENT = 20_000  # finished answers' parts remembered (least recent first out)


@dataclass(slots=True)
class Shown:
    """The attempt's delivery now on screen (the turn sets it at each attempt)."""

    delivery: MessageDelivery | None = None

    def part_ids(self) -> tuple[int, ...]:
        return tuple(m.id for m in self.delivery.messages) if self.delivery is not None else ()


@dataclass(eq=False)
class RunningAnswer:
    """One answer in progress: where, whose question, and its interrupt."""

    channel_id: int
    user_id: int
    question_id: int
    guild_id: int | None = None
    interrupt: Interrupt = field(default_factory=Interrupt)
    queued: bool = False  # admitted, not streaming yet (waiting for a turn, or being prepared)
    shown: Shown = field(default_factory=Shown)
    kept_parts: tuple[int, ...] = ()  # parts before the delivery on screen (an answer continued)
    question: Any = None  # what was asked (`bot.question.context.Question`): a batch grows from it
    arrived: float = 0.0  # loop time of the question's newest message
    paid: bool = False  # counted in the limits of whoever pays (a batch joining it is not counted again)

    def record(self) -> RecordedAnswer:
        """The answer as its record will say: the question and the parts shown now."""
        return RecordedAnswer(self.question_id, self.channel_id, self.kept_parts + self.shown.part_ids())

    def showed_text(self) -> bool:
        """Whether any of this answer's text is on screen (a batch can no longer grow)."""
        return bool(self.kept_parts or self.shown.part_ids())


class RunningAnswers:
    """Registry of answers in progress, oldest first; closed for good at shutdown.

    Every question asks for its member's answers (the cap, a follow-up) and every answer
    leaves: with hundreds running, scanning all of them for each cost more than the rest
    of admission, so they are also kept by member (an answer's member never changes; its
    channel may, to a thread), and the registry is a dict (insertion order: oldest first)."""

    def __init__(self) -> None:
        self._running: dict[RunningAnswer, None] = {}
        self._members: dict[int, list[RunningAnswer]] = {}  # user id -> their answers, oldest first
        self._idle = asyncio.Event()
        self._idle.set()
        self.closed = False  # shutting down: no new answer starts
        self._recent = Lru(MAX_RECENT)  # part id -> the finished answer it belongs to
        self._facts = Lru(MAX_RECENT)  # first part id -> what the answer's buttons need
        self._continued = Lru(MAX_RECENT)  # first part ids of answers a newer answer continued

    def start(self, answer: RunningAnswer) -> RunningAnswer | None:
        """Register `answer`; None once shutdown began (nothing new starts then)."""
        if self.closed:
            return None
        self._running[answer] = None
        self._members.setdefault(answer.user_id, []).append(answer)
        self._idle.clear()
        return answer

    def finish(self, answer: RunningAnswer) -> None:
        """`answer` is over; its parts are remembered until long after their record is written."""
        record = answer.record()
        for part in record.message_ids:
            self._recent.put(part, record)
        if self._running.pop(answer, False) is None:
            mine = self._members[answer.user_id]
            mine.remove(answer)
            if not mine:
                del self._members[answer.user_id]
        if not self._running:
            self._idle.set()

    def holding(self, message_id: int) -> RecordedAnswer | None:
        """The answer `message_id` is a part of, as this process knows it: streaming now
        (its parts so far) or finished lately; None: ask the database."""
        for answer in self._running:
            if message_id in answer.shown.part_ids():
                return answer.record()
        return self._recent.get(message_id)

    def text_holding(self, message_id: int) -> str | None:
        """The whole text of the answer streaming now that `message_id` is a part of, as its
        delivery holds it: a last part Discord already shows may not be among the part ids
        yet (discord.py holds a send that emptied the channel's bucket for up to 5 s).
        None: no such answer, or one continued from earlier parts (its parts are read)."""
        for answer in self._running:
            delivery = answer.shown.delivery
            if delivery is not None and not answer.kept_parts and message_id in answer.shown.part_ids():
                return delivery.full_text
        return None

    def by_question(self, question_id: int) -> RunningAnswer | None:
        """The answer running for the question whose newest message is `question_id`."""
        return next((a for a in self._running if a.question_id == question_id), None)

    def remember(self, facts: AnswerFacts) -> None:
        """An answer ended: what its buttons need, and that it continued an earlier one."""
        self._facts.put(facts.first_message_id, facts)
        if facts.continues_id is not None:
            self._continued.put(facts.continues_id, True)

    def facts_of(self, first_message_id: int) -> AnswerFacts | None:
        return self._facts.get(first_message_id)

    def continued(self, first_message_id: int) -> bool:
        """Whether a newer answer this process gave continued this one."""
        return self._continued.get(first_message_id) is not None

    async def close(self, grace: float) -> int:
        """Admit nothing more, interrupt every answer (each keeps its text and says the
        bot is restarting) and wait up to `grace` seconds for them to finish; returns how
        many were still running after that."""
        self.closed = True
        self.fire(self.all(), "shutdown")
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            pass
        return len(self._running)

    def in_channel(self, channel_id: int) -> list[RunningAnswer]:
        return [a for a in self._running if a.channel_id == channel_id and not a.interrupt.is_set()]

    def latest_of(self, channel_id: int, user_id: int) -> RunningAnswer | None:
        """The member's newest answer still streaming in this channel."""
        mine = [a for a in self._members.get(user_id, ()) if a.channel_id == channel_id and not a.interrupt.is_set()]
        return mine[-1] if mine else None

    def of_member(self, user_id: int) -> list[RunningAnswer]:
        """The member's answers not interrupted yet, queued or streaming (the per-member cap)."""
        return [a for a in self._members.get(user_id, ()) if not a.interrupt.is_set()]

    def fire(self, answers: list[RunningAnswer], reason: InterruptReason) -> int:
        """Interrupt each answer; how many were still running."""
        return sum(answer.interrupt.fire(reason) for answer in answers)

    def all(self) -> list[RunningAnswer]:
        return list(self._running)

    def __len__(self) -> int:
        """Answers streaming (those still waiting for a turn are not counted)."""
        return sum(1 for answer in self._running if not answer.queued)
