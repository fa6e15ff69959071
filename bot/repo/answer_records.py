"""What the buttons under an answer need to know after it ended, and after a restart.

A row per answer, keyed by its first message: who asked, the question's messages (a
batched question has several), the answer it continued (a question that replied to an
earlier answer), the provider's finish reason (Continue is offered after `length`) and
the reasoning captured (the Reasoning button shows it). The parts themselves stay in
`bot.repo.conversation`. Writes are upserts: Regenerate and Continue rewrite the row of
the same answer.

Most answers need no row (`AnswerFacts.needs_row`): a plain answer's facts follow from
the button's custom id (the asker) and its recorded parts (the question, its age), so a
plain answer costs no write of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import AnswerPart, AnswerRecord
from bot.repo.common import insert_for, kept_statement
from bot.repo.conversation import RecordedAnswer
from providers.types import Source

MAX_QUESTION_IDS = 20  # a batched question's messages kept (ids are ~19 digits; the column holds 400)


@dataclass(frozen=True)
class AnswerFacts:
    """One answer as its buttons see it (`first_message_id` identifies it)."""

    first_message_id: int
    channel_id: int
    guild_id: int | None
    asker_id: int
    question_ids: tuple[int, ...]
    continues_id: int | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    sources: tuple[Source, ...] = ()  # web pages it was grounded on, citation order


    @property
    def needs_row(self) -> bool:
        """Whether anything here cannot be told from the parts and the custom id."""
        return bool(self.continues_id is not None or len(self.question_ids) > 1 or self.finish_reason == "length"
                    or self.reasoning or self.sources)


def _row(facts: AnswerFacts) -> dict[str, object]:
    return {"first_message_id": facts.first_message_id, "channel_id": facts.channel_id,
            "guild_id": facts.guild_id, "asker_id": facts.asker_id,
            "question_ids": ",".join(str(i) for i in facts.question_ids[-MAX_QUESTION_IDS:]),
            "continues_id": facts.continues_id, "finish_reason": facts.finish_reason,
            "reasoning": facts.reasoning, "created_at": facts.created_at, "sources": _sources_text(facts.sources)}


def _sources_text(sources: tuple[Source, ...]) -> str | None:
    """One "url<TAB>title" line per source (a URL holds neither; a title's are spaces)."""
    lines = [source.url + ("\t" + " ".join((source.title or "").split()) if source.title else "")
             for source in sources]
    return "\n".join(lines) or None


def _sources_of(text: str | None) -> tuple[Source, ...]:
    found = []
    for line in (text or "").splitlines():
        url, _, title = line.partition("\t")
        if url:
            found.append(Source(url, title or None))
    return tuple(found)


_REWRITTEN = ("channel_id", "guild_id", "asker_id", "question_ids", "finish_reason", "reasoning", "sources")


async def record_answer_facts(session: AsyncSession, answers: Sequence[AnswerFacts]) -> None:
    """Insert or rewrite each answer's row in one statement (a regenerated or continued
    answer keeps its key, what it continued and its age: buttons work for 24 hours from
    the first version)."""
    rows = list({facts.first_message_id: _row(facts) for facts in answers}.values())  # the last word per answer
    if rows:
        await session.execute(kept_statement(session, "answer_records", _records_upsert), rows)


def _records_upsert(session: AsyncSession) -> Any:
    stmt = insert_for(session, AnswerRecord.__table__)
    return stmt.on_conflict_do_update(index_elements=["first_message_id"],
                                      set_={column: stmt.excluded[column] for column in _REWRITTEN})


async def answer_facts(session: AsyncSession, record: RecordedAnswer, asker_id: int,
                       guild_id: int | None) -> AnswerFacts | None:
    """The facts of the recorded answer `record`: its row, or — a plain answer has none —
    one question, nothing continued, not cut, no reasoning, asked by `asker_id` (the
    button's custom id says), as old as its first part's record; None when unknown."""
    first = record.message_ids[0]
    row = await session.get(AnswerRecord, first)
    if row is not None:
        return AnswerFacts(row.first_message_id, row.channel_id, row.guild_id, row.asker_id,
                           tuple(int(i) for i in row.question_ids.split(",") if i), row.continues_id,
                           row.finish_reason, row.reasoning, _aware(row.created_at), _sources_of(row.sources))
    part = await session.get(AnswerPart, first)
    if part is None:
        return None
    return AnswerFacts(first, record.channel_id, guild_id, asker_id, (record.question_id,),
                       created_at=_aware(part.created_at))


def _aware(moment: datetime) -> datetime:
    """SQLite hands back a naive UTC time."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def has_newer(session: AsyncSession, first_message_id: int) -> bool:
    """Whether a later answer continued this one (its question replied to it)."""
    query = select(exists().where(AnswerRecord.continues_id == first_message_id))
    return bool(await session.scalar(query))


async def forget_parts(session: AsyncSession, message_ids: Sequence[int]) -> None:
    """Parts a regenerated answer no longer has (their messages were deleted)."""
    if message_ids:
        await session.execute(delete(AnswerPart).where(AnswerPart.message_id.in_(list(message_ids))))
