"""The bookkeeping an answer leaves behind, as writes for `WriteBehind`.

Each answer adds to its key's health and its day row of usage, and records which
messages it is made of and what its buttons need later. Queued, writes of the same row add up (a busy minute on one key
is one update, not one per answer), and a run of usage or answer writes goes in one
statement (`add_usages`, `record_answers`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from sqlalchemy.ext.asyncio import AsyncSession

from bot.repo.answer_records import AnswerFacts, forget_parts, record_answer_facts
from bot.repo.conversation import RecordedAnswer, record_answers
from bot.repo.keys import KeyRef, record_key_failure, record_key_success
from bot.repo.usage import UsageAdd, add_usages


class Unmerged:
    """A write that never adds up with another (each is its own event or record)."""

    @property
    def merge_key(self) -> None:
        return None

    def plus(self, other: object) -> Unmerged:
        raise TypeError(f"{type(self).__name__} writes never add up")


@dataclass(frozen=True)
class KeySuccess:
    """`count` answers succeeded with the key, the last at `at`."""

    what: ClassVar[str] = "key_health"
    ref: KeyRef
    at: datetime
    count: int = 1

    @property
    def merge_key(self) -> Hashable:
        return self.ref

    def plus(self, other: KeySuccess) -> KeySuccess:
        return KeySuccess(self.ref, max(self.at, other.at), self.count + other.count)

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[KeySuccess]) -> None:
        for item in items:
            await record_key_success(session, item.ref, item.at, item.count)


@dataclass(frozen=True)
class KeyFailure(Unmerged):
    """One error with the key (its type is kept); with `until`, a rest that other
    processes must see, which only ever extends."""

    what: ClassVar[str] = "key_health"
    ref: KeyRef
    reason: str
    at: datetime
    until: datetime | None = None

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[KeyFailure]) -> None:
        for item in items:
            await record_key_failure(session, item.ref, item.reason, item.at, item.until)


@dataclass(frozen=True)
class UsageWrite:
    """Answers to add to one day row of usage."""

    what: ClassVar[str] = "usage"
    add: UsageAdd

    @property
    def merge_key(self) -> Hashable:
        return self.add.key, self.add.counts.estimated  # the row's whole identity

    def plus(self, other: UsageWrite) -> UsageWrite:
        return UsageWrite(UsageAdd(self.add.key, self.add.counts + other.add.counts,
                                   self.add.messages + other.add.messages))

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[UsageWrite]) -> None:
        await add_usages(session, [item.add for item in items])


@dataclass(frozen=True)
class AnswerWrite(Unmerged):
    """Which messages make one answer, so a reply to any of them continues it."""

    what: ClassVar[str] = "answer"
    answer: RecordedAnswer

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[AnswerWrite]) -> None:
        await record_answers(session, [item.answer for item in items])


@dataclass(frozen=True)
class AnswerFactsWrite(Unmerged):
    """What an answer's buttons need later (`bot.repo.answer_records`); `gone`: parts a
    regenerated answer no longer has."""

    what: ClassVar[str] = "answer"
    facts: AnswerFacts
    gone: tuple[int, ...] = ()

    @classmethod
    async def write_all(cls, session: AsyncSession, items: Sequence[AnswerFactsWrite]) -> None:
        await record_answer_facts(session, [item.facts for item in items])
        await forget_parts(session, [part for item in items for part in item.gone])
