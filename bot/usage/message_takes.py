"""Counting admitted messages in their hour, many questions in one transaction.

A message limit is counted in the database before a provider is asked (every process
enforces one limit), so each admitted answer costs one write. One transaction per answer
made a burst queue on the database's write lock: 500 questions at once on the operator's
default (its per-member bound is on by default) took 4.6 ms of CPU each and held the
first message up to 5 s. Here the takes that arrive while one transaction runs wait for
the next, which takes all of them: a burst is a handful of transactions. Each take is the
same single statement as before (`take_message`: it counts only within the limit), so a
batch changes nothing of what is counted, only how often the database commits.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from bot.repo.usage import take_message


@dataclass(frozen=True, slots=True)
class Take:
    """One message to count in `user_id`'s `hour` of bucket `guild_id`, within `limit`."""

    guild_id: int
    user_id: int
    hour: datetime
    limit: int


class MessageTakes:
    """The takes waiting for the next transaction of one database (`sessions`)."""

    def __init__(self, sessions: Callable) -> None:
        self._sessions = sessions
        self._waiting: list[tuple[Take, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def take(self, take: Take) -> bool:
        """Whether the message was counted (False: the hour is full)."""
        taken: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((take, taken))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        return await asyncio.shield(taken)  # a cancelled question leaves its take to the batch

    async def _write(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                async with self._sessions() as session, session.begin():
                    counted = [await take_message(session, t.guild_id, t.user_id, t.hour, t.limit)
                               for t, _ in batch]
            except BaseException as exc:  # every waiter of this batch hears it; the next batch tries anew
                for _, taken in batch:
                    if not taken.done():
                        taken.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
                continue
            for ok, (_, taken) in zip(counted, batch, strict=True):
                if not taken.done():
                    taken.set_result(ok)


_TAKES: weakref.WeakKeyDictionary[object, MessageTakes] = weakref.WeakKeyDictionary()


def message_takes(sessions: Callable) -> MessageTakes:
    """The batcher of this database's session factory (one per bot)."""
    found = _TAKES.get(sessions)
    if found is None:
        found = _TAKES[sessions] = MessageTakes(sessions)
    return found
