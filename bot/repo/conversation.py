"""Conversation memory in the database: the Discord messages of each answer, how far
back a server's reply chains go, and how long back-to-back messages wait to become one
question.

An answer longer than one Discord message is split; only its first message replies to
the question. Recording every part (answer's first message, question, position) lets a
reply to any part continue the whole answer, and survives a restart. Writes are
INSERT ... ON CONFLICT DO NOTHING / upserts, so two shard processes never collide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import AnswerPart, ConversationSettings
from bot.repo.common import RepositoryError, ensure_server, insert_for, kept_statement
from bot.repo.versions import config_write

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


def check_history_messages(value: int) -> int:
    if not 0 <= value <= MAX_HISTORY_MESSAGES:
        raise RepositoryError("history_out_of_range", limit=MAX_HISTORY_MESSAGES)
    return value


@config_write("server", "guild_id")
async def set_history_messages(session: AsyncSession, guild_id: int, value: int) -> None:
    """How many earlier messages of a reply chain the server sends as history."""
    value = check_history_messages(value)
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ConversationSettings).values(guild_id=guild_id, history_messages=value)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"],
                                                     set_={"history_messages": value}))


async def history_messages(session: AsyncSession, guild_id: int | None) -> int:
    """The server's history depth (the default in DMs and where nothing was set)."""
    if guild_id is None:
        return DEFAULT_HISTORY_MESSAGES
    row = await session.get(ConversationSettings, guild_id)
    return row.history_messages if row is not None else DEFAULT_HISTORY_MESSAGES


@config_write("server", "guild_id")
async def set_threads_enabled(session: AsyncSession, guild_id: int, enabled: bool) -> None:
    """Whether a mention in a text channel opens a thread for its answer."""
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ConversationSettings).values(
        guild_id=guild_id, history_messages=DEFAULT_HISTORY_MESSAGES, threads_enabled=enabled)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"],
                                                     set_={"threads_enabled": enabled}))


async def threads_enabled(session: AsyncSession, guild_id: int | None) -> bool:
    """The server's thread switch (off in DMs and where nothing was set)."""
    if guild_id is None:
        return False
    row = await session.get(ConversationSettings, guild_id)
    return row.threads_enabled if row is not None else False


def batch_seconds_allowed(value: float) -> bool:
    """Within 0 (no batching) and MAX_BATCH_SECONDS; NaN and infinity are not."""
    return math.isfinite(value) and 0 <= value <= MAX_BATCH_SECONDS


@config_write("server", "guild_id")
async def set_batch_seconds(session: AsyncSession, guild_id: int, value: float) -> float:
    """How long one member's back-to-back messages wait to become one question (0: off).
    A value out of bounds is the caller's bug (ValueError): the command refuses it in the
    member's language before it gets here."""
    if not batch_seconds_allowed(value):
        raise ValueError(f"batch seconds out of bounds: {value!r}")
    value = float(value)
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ConversationSettings).values(
        guild_id=guild_id, history_messages=DEFAULT_HISTORY_MESSAGES, batch_seconds=value)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"],
                                                     set_={"batch_seconds": value}))
    return value


def batch_seconds_of(row: ConversationSettings | None) -> float:
    """The stored window, else the default (no row, or never set)."""
    return row.batch_seconds if row is not None and row.batch_seconds is not None else DEFAULT_BATCH_SECONDS


async def batch_seconds(session: AsyncSession, guild_id: int | None) -> float:
    """The server's batch window (the default in DMs and where nothing was set)."""
    if guild_id is None:
        return DEFAULT_BATCH_SECONDS
    return batch_seconds_of(await session.get(ConversationSettings, guild_id))
