"""Conversation memory in the database: the Discord messages of each answer. (How far
back a server's reply chains go and how long back-to-back messages wait to become one
question are declared settings, `bot.capabilities.listening.settings`, bounded by the
numbers here.)

An answer longer than one Discord message is split; only its first message replies to
the question. Recording every part (answer's first message, question, position) lets a
reply to any part continue the whole answer, and survives a restart. Writes are
INSERT ... ON CONFLICT DO NOTHING / upserts, so two shard processes never collide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import AnswerPart
from bot.repo.common import insert_for, kept_statement

DEFAULT_HISTORY_MESSAGES = 10
MAX_HISTORY_MESSAGES = 50
DEFAULT_BATCH_SECONDS = 2.0
MAX_BATCH_SECONDS = 10.0  # longer, and a member waits visibly for an answer to start


@dataclass(frozen=True)
class RecordedAnswer:
    """One answer as recorded: its messages in order and the question it answered."""

    question_id: int
    channel_id: int
    message_ids: tuple[int, ...]


async def record_answers(session: AsyncSession, answers: Sequence[RecordedAnswer]) -> None:
    """Remember which messages make each answer (first message first); a part already
    recorded (by another shard) stays as it is. One statement sent with every part's
    values (executemany)."""
    rows = [{"message_id": mid, "first_message_id": answer.message_ids[0], "question_id": answer.question_id,
             "channel_id": answer.channel_id, "position": position}
            for answer in answers for position, mid in enumerate(answer.message_ids)]
    if rows:
        await session.execute(kept_statement(session, "answer_parts", _parts_insert), rows)


def _parts_insert(session: AsyncSession) -> Any:
    return insert_for(session, AnswerPart.__table__).on_conflict_do_nothing(index_elements=["message_id"])


async def answer_of(session: AsyncSession, message_id: int) -> RecordedAnswer | None:
    """The whole answer `message_id` is a part of, or None when it is not a recorded answer."""
    part = await session.get(AnswerPart, message_id)
    if part is None:
        return None
    rows = await session.scalars(select(AnswerPart).where(AnswerPart.first_message_id == part.first_message_id)
                                 .order_by(AnswerPart.position))
    return RecordedAnswer(part.question_id, part.channel_id, tuple(row.message_id for row in rows))
