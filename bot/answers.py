"""The answers streaming right now: what `/stop`, a newer question and shutdown act on.

Each running answer has its own `Interrupt`; several can run in one channel at once
(different members, or one member in several threads), so nothing here is keyed by
channel alone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from stream.interrupt import Interrupt, InterruptReason


@dataclass(eq=False)
class RunningAnswer:
    """One answer in progress: where, whose question, and its interrupt."""

    channel_id: int
    user_id: int
    question_id: int
    guild_id: int | None = None
    interrupt: Interrupt = field(default_factory=Interrupt)
    queued: bool = False  # still waiting for a turn (`bot.turn_queue`): not streaming yet


class RunningAnswers:
    """Registry of answers in progress, oldest first; closed for good at shutdown."""

    def __init__(self) -> None:
        self._running: list[RunningAnswer] = []
        self._idle = asyncio.Event()
        self._idle.set()
        self.closed = False  # shutting down: no new answer starts

    def start(self, answer: RunningAnswer) -> RunningAnswer:
        self._running.append(answer)
        self._idle.clear()
        return answer

    def finish(self, answer: RunningAnswer) -> None:
        if answer in self._running:
            self._running.remove(answer)
        if not self._running:
            self._idle.set()

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
        mine = [a for a in self.in_channel(channel_id) if a.user_id == user_id]
        return mine[-1] if mine else None

    def of_member(self, user_id: int) -> list[RunningAnswer]:
        return [a for a in self._running if a.user_id == user_id and not a.interrupt.is_set()]

    def fire(self, answers: list[RunningAnswer], reason: InterruptReason) -> int:
        """Interrupt each answer; how many were still running."""
        return sum(answer.interrupt.fire(reason) for answer in answers)

    def all(self) -> list[RunningAnswer]:
        return list(self._running)

    def __len__(self) -> int:
        """Answers streaming (those still waiting for a turn are not counted)."""
        return sum(1 for answer in self._running if not answer.queued)
