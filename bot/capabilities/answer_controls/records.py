"""What an answer leaves for its buttons: who asked, the question's messages, the answer
it continued, the finish reason and the reasoning (`bot.repo.answer_records.AnswerFacts`).

Built from the question and the turn's result after the answer is on screen; only which
earlier answer the question replied to is looked up (this process first, then the
database).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.question.history import Recall
from bot.repo.answer_records import AnswerFacts
from bot.repo.conversation import RecordedAnswer
from providers.i18n import t
from stream.orchestrator import StreamResult
from stream.thought_log import ThoughtLogLabels, reasoning_text

if TYPE_CHECKING:
    from bot.question.context import Question


def kept_reasoning(result: StreamResult, locale: str | None, bound: int) -> str | None:
    """The reasoning the Reasoning button shows (as the thought log words it), at most
    `bound` characters (its end: the conclusion matters most); None when there is none."""
    if not result.thoughts and not result.captured_blocks:
        return None
    labels = ThoughtLogLabels.translated(lambda key: t(key, locale))
    text = reasoning_text(result.thoughts, result.captured_blocks, labels)
    if not text:
        return None
    return text if len(text) <= bound else "…" + text[len(text) - bound + 1:]


def answer_facts(question: Question, record: RecordedAnswer, continues_id: int | None,
                 result: StreamResult | None, reasoning_bound: int) -> AnswerFacts:
    """The facts of the answer `record` holds (its first part names it)."""
    reasoning = kept_reasoning(result, question.locale, reasoning_bound) if result is not None else None
    return AnswerFacts(record.message_ids[0], record.channel_id, question.where.guild_id, question.asker_id,
                       question.message_ids, continues_id, result.finish_reason if result is not None else None,
                       reasoning)


async def continued_answer(question: Question, recall: Recall) -> int | None:
    """The earlier answer (its first part) the question replied to, if it replied to one:
    that answer's buttons no longer change it once this one exists."""
    if question.again is not None:
        return question.again.facts.continues_id
    reference = question.first_message.reference
    if reference is None or reference.message_id is None:
        return None
    answer = await recall.answer_holding(reference.message_id)
    return answer.message_ids[0] if answer is not None and answer.message_ids else None
