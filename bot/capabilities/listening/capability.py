"""Listening's seam: a listen channel's answers start at least its gap apart."""

from __future__ import annotations

from dataclasses import dataclass

from bot.capabilities.listening.gaps import ChannelGaps
from bot.question.seams import AnswerPart, Joining
from stream.interrupt import Interrupt


class ListenGaps:
    """Joins a question written in a listen channel (not Regenerate or Continue, which
    answer a question that already waited)."""

    def __init__(self) -> None:
        self.gaps = ChannelGaps()  # this process's listen channels

    def join(self, joining: Joining) -> AnswerPart | None:
        question = joining.question
        if question.listening is None or question.again is not None:
            return None
        return GapPart(self.gaps, question.where.channel_id, question.listening)


@dataclass
class GapPart(AnswerPart):
    gaps: ChannelGaps
    channel_id: int
    gap: float

    async def wait(self, interrupt: Interrupt) -> bool:
        """False: joined by a newer message of the member, or stopped, while it waited."""
        return await self.gaps.wait(self.channel_id, self.gap, interrupt)
