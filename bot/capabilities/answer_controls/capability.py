"""Answer controls' seams: what the buttons under an answer need later, looked up while
the answer is prepared and written when it is over."""

from __future__ import annotations

from dataclasses import dataclass

from bot.capabilities.answer_controls.records import answer_facts, continued_answer
from bot.load.bookkeeping import AnswerFactsWrite, AnswerWrite
from bot.question.history import Recall
from bot.question.seams import AnswerPart, Ended, Joining
from providers.types import ChatRequest


class AnswerRecords:
    """Joins every answer: a reply to any part of it, and its buttons, need its record."""

    def join(self, joining: Joining) -> AnswerPart | None:
        return RecordsPart(joining)


@dataclass
class RecordsPart(AnswerPart):
    joining: Joining
    continues_id: int | None = None  # the earlier answer the question replied to

    async def prepare(self, request: ChatRequest) -> ChatRequest:
        services = self.joining.services
        self.continues_id = await continued_answer(self.joining.question, Recall(services.answers, services.sessions))
        return request

    async def books(self, ended: Ended) -> None:
        """Which messages make the answer and what its buttons need: kept in this process
        at once (a reply may come before the batch is written), then written."""
        services, record = self.joining.services, ended.answer.record()
        if not record.message_ids:
            return
        facts = answer_facts(ended.question, record, self.continues_id, ended.outcome.result,
                             services.settings.MAX_REASONING_CHARS)
        services.answers.remember(facts)
        if services.writes is None or services.sessions is None:
            return
        services.writes.put(AnswerWrite(record))
        if facts.needs_row or ended.question.again is not None:  # a plain answer's facts need no row
            services.writes.put(AnswerFactsWrite(facts, ended.gone))
