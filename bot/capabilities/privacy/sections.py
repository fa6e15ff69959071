"""The `MemberData` of the tables that existed before this package: what each keeps
about one member, as JSON rows for the export, and what `/privacy erase` deletes.

Ids are strings (Discord's own form of a snowflake: JavaScript readers keep every
digit), times ISO 8601 in UTC. A personal key appears only as its stored last four
characters behind the mask (`bot.vault.masked_tail`): the ciphertext is never read, so
no export can hold more of a key than `/personal` shows.

Counters the server's limits read (`UsageDay` of today, `MessageHour` of this hour,
`SearchDay` of today) outlive an erasure until their window ends: deleting them would
hand the member a fresh allowance (see the package docstring).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.member_data import Exported, MemberData, id_text
from bot.db.models import (
    AccessRule,
    AnswerPart,
    AnswerRecord,
    MessageHour,
    PersonalConfig,
    SearchDay,
    UsageDay,
)
from bot.repo.common import as_utc
from bot.vault import masked_tail


def _when(value: datetime | date | None) -> str | None:
    if isinstance(value, datetime):
        return as_utc(value).isoformat()  # type: ignore[union-attr] - not None here
    return None if value is None else value.isoformat()


def _this_hour() -> datetime:
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


def _today() -> date:
    return datetime.now(UTC).date()


@dataclass(frozen=True)
class PersonalSettings(MemberData):
    """`/personal`: the member's provider, model, masked key, switches and key health."""

    name: str = "personal_settings"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(PersonalConfig).where(PersonalConfig.user_id == user_id)
                                     .order_by(PersonalConfig.id))
        return [_personal_row(row) for row in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        result = await session.execute(delete(PersonalConfig).where(PersonalConfig.user_id == user_id))
        return int(result.rowcount or 0)


def _personal_row(row: PersonalConfig) -> dict[str, Any]:
    return {
        "server_id": id_text(row.guild_id),  # None: the member's global settings
        "provider": row.provider, "model": row.model,
        "key": masked_tail(row.last4) if row.encrypted_key is not None else None,
        "override_enabled": row.override_enabled, "server_fallback_allowed": row.server_fallback_allowed,
        "key_successes": row.successes, "key_errors": row.errors, "key_last_error": row.last_error_type,
        "key_last_error_at": _when(row.last_error_at), "key_last_used_at": _when(row.last_used_at),
        "key_resting_until": _when(row.cooling_down_until),
    }


@dataclass(frozen=True)
class UsageDays(MemberData):
    """Tokens, messages and searches per UTC day, server, model and payer."""

    name: str = "usage_days"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(UsageDay).where(UsageDay.user_id == user_id)
                                     .order_by(UsageDay.day, UsageDay.id))
        return [{"day": _when(r.day), "server_id": id_text(r.guild_id), "provider": r.provider, "model": r.model,
                 "paid_by": r.credential_source, "estimated": r.estimated, "input_tokens": r.input_tokens,
                 "output_tokens": r.output_tokens, "reasoning_tokens": r.reasoning_tokens,
                 "cached_input_tokens": r.cached_input_tokens, "messages": r.messages, "searches": r.searches}
                for r in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Every day before today: today's rows count against tokens-per-day limits."""
        result = await session.execute(delete(UsageDay).where(UsageDay.user_id == user_id,
                                                              UsageDay.day < _today()))
        return int(result.rowcount or 0)


@dataclass(frozen=True)
class MessageHours(MemberData):
    """Messages per clock hour to a limited route (the messages-per-hour limit's count)."""

    name: str = "message_hours"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(MessageHour).where(MessageHour.user_id == user_id)
                                     .order_by(MessageHour.hour, MessageHour.id))
        return [{"hour": _when(r.hour), "server_id": id_text(r.guild_id), "messages": r.messages} for r in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Every hour before this one: this hour's row is what its limit counts."""
        result = await session.execute(delete(MessageHour).where(MessageHour.user_id == user_id,
                                                                 MessageHour.hour < _this_hour()))
        return int(result.rowcount or 0)


@dataclass(frozen=True)
class SearchDays(MemberData):
    """Web searches per UTC day and server on the server's keys (the searches-per-day count)."""

    name: str = "search_days"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(SearchDay).where(SearchDay.user_id == user_id)
                                     .order_by(SearchDay.day, SearchDay.guild_id))
        return [{"day": _when(r.day), "server_id": id_text(r.guild_id), "searches": r.searches} for r in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Every day before today: today's row is what its limit counts."""
        result = await session.execute(delete(SearchDay).where(SearchDay.user_id == user_id,
                                                               SearchDay.day < _today()))
        return int(result.rowcount or 0)


@dataclass(frozen=True)
class Answers(MemberData):
    """The answers the member asked for (what their buttons need) and the messages of each."""

    name: str = "answers"

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        answers = list(await session.scalars(select(AnswerRecord).where(AnswerRecord.asker_id == user_id)
                                             .order_by(AnswerRecord.created_at, AnswerRecord.first_message_id)))
        parts = await _parts_of(session, (a.first_message_id for a in answers))
        return [_answer_row(a, parts.get(a.first_message_id, [])) for a in answers]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """The answers and their parts (a part names no member: it goes with its answer)."""
        asked = select(AnswerRecord.first_message_id).where(AnswerRecord.asker_id == user_id)
        parts = await session.execute(delete(AnswerPart).where(AnswerPart.first_message_id.in_(asked)))
        answers = await session.execute(delete(AnswerRecord).where(AnswerRecord.asker_id == user_id))
        return int(parts.rowcount or 0) + int(answers.rowcount or 0)


async def _parts_of(session: AsyncSession, first_ids: Iterable[int]) -> dict[int, list[str]]:
    """Message ids of each answer's parts, in order; one query (chunks keep the IN list short)."""
    ids, found = list(first_ids), {}
    for start in range(0, len(ids), 500):
        rows = await session.execute(select(AnswerPart.first_message_id, AnswerPart.message_id)
                                     .where(AnswerPart.first_message_id.in_(ids[start:start + 500]))
                                     .order_by(AnswerPart.first_message_id, AnswerPart.position))
        for first, message in rows:
            found.setdefault(first, []).append(str(message))
    return found


def _answer_row(answer: AnswerRecord, parts: list[str]) -> dict[str, Any]:
    return {
        "first_message_id": id_text(answer.first_message_id), "channel_id": id_text(answer.channel_id),
        "server_id": id_text(answer.guild_id), "created_at": _when(answer.created_at),
        "question_message_ids": [q for q in answer.question_ids.split(",") if q],
        "continues_answer": id_text(answer.continues_id), "finish_reason": answer.finish_reason,
        "reasoning": answer.reasoning,
        "sources": [dict(zip(("url", "title"), line.split("\t", 1), strict=False))
                    for line in (answer.sources or "").splitlines() if line],
        "message_ids": parts,
    }


@dataclass(frozen=True)
class ManagersRecords(MemberData):
    """Data a server's managers keep about the member: exported, never erased by the
    member (erasing a block would let the blocked member lift it)."""

    name: str = "blocked_by_servers"
    kept_on_erase: bool = True

    async def export(self, session: AsyncSession, user_id: int) -> Exported:
        rows = await session.scalars(select(AccessRule).where(AccessRule.target_id == user_id,
                                                              AccessRule.kind == "block_member")
                                     .order_by(AccessRule.id))
        return [{"server_id": id_text(r.guild_id), "rule": r.kind} for r in rows]

    async def erase(self, session: AsyncSession, user_id: int) -> int:
        """Nothing: only the server's managers lift their rules (`/access unblock`)."""
        return 0
