"""Admission: at most MAX_CONCURRENT_ANSWERS turns run at once; the rest wait their turn.

Waiting is first come, first served, and a place is never lost: a finishing turn hands
its slot straight to the oldest waiter (nobody arriving meanwhile can take it), and a
newcomer queues behind anyone already waiting even when a slot looks free. A waiter
leaves the line only when its interrupt fires (`/stop`, shutdown); a member's follow-up
to a waiting question takes that question's place. A slot handed to a waiter that has
just left goes on to the next one.

The default of 500 is what one process on 2 cores streams while staying within its CPU
(issue 14's measurement): admitting more only makes every answer slower, while waiting
members see "typing…" (sent once by the caller) and get their answer in full later.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass

from bot.load.answers import RunningAnswer
from bot.load.metrics import ANSWERS_QUEUED
from stream.interrupt import Interrupt


@dataclass(eq=False)
class _Ticket:
    """One place in the line: whose (`key`), and the slot handed over (`granted`)."""

    key: Hashable
    interrupt: Interrupt
    granted: asyncio.Future[None]


class TurnQueue:
    """A FIFO of turns with `limit` slots (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self._waiting: deque[_Ticket] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def turn(self, interrupt: Interrupt, on_wait: Callable[[], Awaitable[None]] | None = None,
                   key: Hashable = None) -> AsyncIterator[bool]:
        """Hold a slot for the block; yields False (holding nothing) when `interrupt`
        fired while waiting. `on_wait` runs once, only when the turn has to wait. A turn
        whose `key` (a member in a channel) has a waiting turn that a follow-up just
        interrupted takes that turn's place in the line."""
        admitted = await self._enter(interrupt, on_wait, key)
        try:
            yield admitted
        finally:
            if admitted:
                self._release()

    async def _enter(self, interrupt: Interrupt, on_wait: Callable[[], Awaitable[None]] | None,
                     key: Hashable) -> bool:
        if interrupt.is_set():
            return False
        if self.running < self.limit and not self._waiting:
            self.running += 1
            return True
        ticket = _Ticket(key, interrupt, asyncio.get_running_loop().create_future())
        self._take_place(ticket)
        if on_wait is not None:
            with contextlib.suppress(Exception):  # a missed "typing…" must not cost the place
                await on_wait()
        return await self._wait(ticket)

    def _take_place(self, ticket: _Ticket) -> None:
        """The place of the same member's waiting turn a follow-up replaced, else the end."""
        for index, old in enumerate(self._waiting):
            if (ticket.key is not None and old.key == ticket.key and old.interrupt.reason == "follow_up"
                    and not old.granted.done()):
                old.granted.cancel()  # its waiter leaves without touching the line
                self._waiting[index] = ticket
                return
        self._waiting.append(ticket)
        ANSWERS_QUEUED.set(len(self._waiting))

    async def _wait(self, ticket: _Ticket) -> bool:
        stopped = asyncio.ensure_future(ticket.interrupt.wait())
        try:
            await asyncio.wait({ticket.granted, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the waiting task itself was cancelled
            self._leave(ticket)
            raise
        finally:
            stopped.cancel()
        if ticket.granted.done() and not ticket.granted.cancelled() and not ticket.interrupt.is_set():
            return True
        self._leave(ticket)  # interrupted: out of the line, or the slot it just got passed on
        return False

    def _leave(self, ticket: _Ticket) -> None:
        if ticket.granted.cancelled():
            return  # a follow-up took its place
        if ticket.granted.done():
            self._release()
            return
        ticket.granted.cancel()
        self._waiting.remove(ticket)
        ANSWERS_QUEUED.set(len(self._waiting))

    def _release(self) -> None:
        """Hand the slot to the oldest waiter still waiting, else free it."""
        while self._waiting:
            ticket = self._waiting.popleft()
            ANSWERS_QUEUED.set(len(self._waiting))
            if not ticket.granted.done():
                ticket.granted.set_result(None)  # the slot passes on: `running` stays the same
                return
        self.running -= 1


async def answer_in_turn(turns: TurnQueue, running: RunningAnswer, on_wait: Callable[[], Awaitable[None]],
                         answer: Callable[[], Awaitable[object]]) -> bool:
    """`answer()` once a turn is free; False when `running` was interrupted while it
    waited (`/stop`, the member's follow-up, shutdown: the caller says what fits). While
    it waits the member sees `on_wait` ("typing…", once); a follow-up by the same member
    in the same channel takes this question's place in the line."""
    member_here = (running.channel_id, running.user_id)
    async with turns.turn(running.interrupt, on_wait, member_here) as admitted:
        if admitted:
            await answer()
        return admitted
