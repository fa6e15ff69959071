"""The bot as a process: log in, serve, and shut down gracefully on SIGTERM or SIGINT.

A container stop sends SIGTERM and kills about ten seconds later, so shutdown is
ordered to fit: stop admitting questions, end every answer in flight (its text kept,
the indicator removed, a note that the bot is restarting), then close the Discord
session and the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from bot.app import LLMBot
from bot.edge.invite import invite_url
from bot.load.heap import settle_heap

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 7.0  # seconds answers get to write their last edit


async def serve(bot: LLMBot, token: str) -> None:
    """Run until Discord closes or a stop signal arrives; raises what login raises."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    async with bot:
        await bot.login(token)  # what bot.start does first; the application id is known after it
        if bot.application_id is not None:
            log.info("invite the bot to a server with: %s", invite_url(bot.application_id))
        settle_heap()  # start-up is done: its objects stay for good (bot/load/heap.py)
        running = asyncio.create_task(bot.connect())
        waiting = asyncio.create_task(stopping.wait())
        done, _ = await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if running in done:
            running.result()
            return
        log.info("stop signal received: finishing answers in flight")
        left = await bot.answers.close(SHUTDOWN_GRACE)
        if left:
            log.warning("%d answer(s) did not finish within %.0f s", left, SHUTDOWN_GRACE)
        await bot.close()
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    log.info("shut down cleanly")
