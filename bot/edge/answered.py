"""Return from a Discord edit once Discord has answered it, not once discord.py lets go.

discord.py keeps each route's bucket itself: a request that leaves its bucket empty is
held inside the call until the bucket resets (up to a channel's five-second window),
after Discord already answered. For an answer's edits that hold is dead time: the turn
keeps its admission slot and its bookkeeping waits, although the member already sees
the text. `until_answered` runs such a request as its own task and returns as soon as
the HTTP trace reports Discord's success answer for it (`response_arrived`); the task
finishes discord.py's wait in the background (the bucket stays respected: the next
request to it waits inside discord.py as before). A failure answer, or a client without
the trace, is awaited in full, so its exception reaches the caller as before.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)

# The future the trace resolves with the status of the request made in this context.
_ANSWER: contextvars.ContextVar[asyncio.Future[int] | None] = contextvars.ContextVar(
    "discord_answer", default=None)
# Requests answered but still held by discord.py (kept referenced until they end).
_HELD: set[asyncio.Task[Any]] = set()


def response_arrived(status: int) -> None:
    """Called by the HTTP trace when a response arrives (inside the requesting task)."""
    answer = _ANSWER.get()
    if answer is not None and not answer.done():
        answer.set_result(status)


async def until_answered(request: Coroutine[Any, Any, Any]) -> None:
    """Run `request` (whose result is not needed); return once Discord answered it with
    success, or when it ends, whichever comes first. Its failure is raised here."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[int] = loop.create_future()
    token = _ANSWER.set(answer)
    try:
        task = loop.create_task(request)  # runs in a copy of this context: the trace finds `answer`
    finally:
        _ANSWER.reset(token)
    try:
        await asyncio.wait({task, answer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task.done() or not 200 <= answer.result() < 300:
        await task  # a failure (or a retry discord.py makes) ends as discord.py decides
        return
    _HELD.add(task)
    task.add_done_callback(_released)


def _released(task: asyncio.Task[Any]) -> None:
    _HELD.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.debug("an answered Discord request failed afterwards: %s", type(task.exception()).__name__)


def held() -> int:
    """How many answered requests discord.py still holds (tests, diagnostics)."""
    return len(_HELD)
