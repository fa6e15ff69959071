"""Preparation: what an admitted answer needs that takes work to get — the history, the
request (files downloaded and read, the capabilities' additions: pages a question links)
and where it streams (the channel, or a new thread on the question).

It runs under one deadline (`prepare_seconds`: a file or link past it is left out with a
note; past it and a grace the question ends with a note), and stops the moment the
answer is interrupted (`/stop`, a newer message, shutdown): an interrupted answer leaves
the member's cap at once, so its work must end with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, replace

from bot.question.admitting import Admitted
from bot.question.context import Question, Services
from bot.question.conversation import build_request
from bot.question.history import History, Recall, conversation_history, listen_history
from bot.question.threads import AnswerPlace, ThreadOpener
from bot.readers.pool import preparation_deadline
from bot.repo.conversation import DEFAULT_HISTORY_MESSAGES
from bot.settings import Settings
from providers.types import ChatRequest, Message

log = logging.getLogger(__name__)

PREPARE_GRACE_SECONDS = 10.0  # past the preparation's deadline: notes, the thread, the request


def prepare_seconds(settings: Settings) -> float:
    """One question's preparation deadline: four documents' worth of reading (60 s by default)."""
    return 4 * settings.READER_SECONDS


@dataclass
class Prepared:
    """What the turn needs that took work to get: where it streams, the history and the request."""

    place: AnswerPlace
    history: History
    request: ChatRequest


class Preparation:
    """Prepares every answer of one bot."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.threads = ThreadOpener()

    async def prepare_answer(self, question: Question, admitted: Admitted) -> Prepared | None:
        """The preparation, ended the moment the answer is interrupted (None: the caller says why)
        or when it overruns its deadline and grace (None: the member is told here)."""
        seconds, answer = prepare_seconds(self.services.settings), admitted.answer
        preparing = asyncio.ensure_future(self._prepare(question, admitted, seconds))
        stopped = asyncio.ensure_future(answer.interrupt.wait())
        try:
            await asyncio.wait({preparing, stopped}, timeout=seconds + PREPARE_GRACE_SECONDS,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not preparing.done():
                preparing.cancel()  # its downloads end, a reader process on its file is killed
                with contextlib.suppress(asyncio.CancelledError):
                    await preparing
        if not preparing.cancelled():
            return preparing.result()
        if not answer.interrupt.is_set():
            log.warning("a question's preparation overran %.0f s and was given up", seconds + PREPARE_GRACE_SECONDS)
            await question.reply("chat.prepare_timeout", seconds=int(seconds))
        return None

    async def _prepare(self, question: Question, admitted: Admitted, seconds: float) -> Prepared:
        services = self.services
        history = await self._history(question, Recall(services.answers, services.sessions))
        me = services.client.user
        with preparation_deadline(seconds):  # every document and page of the question within it
            request = await build_request(question, history, services.settings.MAX_OUTPUT_TOKENS,
                                          me.display_name if me is not None else "the bot")
            for part in admitted.parts:
                request = await part.prepare(request)
        again = question.again
        if again is not None and again.kind == "continue":  # the answer so far, for the model to carry on
            request = replace(request, messages=[*request.messages,
                                                 Message("assistant", again.text, partial_answer=True)])
        place = await self._place(question)
        admitted.answer.channel_id = place.channel_id
        return Prepared(place, history, request)

    async def _history(self, question: Question, recall: Recall) -> History:
        """What the question continues (up to the batch's first message): a listen channel's
        recent messages, else its reply chain, DM or thread; plus the exchange it interrupted
        when that is not in it already."""
        if question.delivery is not None:
            return History()  # a command continues no conversation: its capability brings what it reads
        server = question.config.server
        depth = server.history_messages if server is not None else DEFAULT_HISTORY_MESSAGES
        first = question.first_message
        if question.listening is not None:
            history = await listen_history(first, question.bot_id, depth)
        else:
            history = await conversation_history(first, question.bot_id, depth, recall)
        follows = question.follows
        if follows is not None and follows.answer and not any(m.id in follows.part_ids for m in history.sources):
            history.messages += [Message("user", follows.prompt, name=follows.name),
                                 Message("assistant", follows.answer)]
        return history

    async def _place(self, question: Question) -> AnswerPlace:
        """Where the answer streams: the command's own place (a delivery), an earlier
        answer's own channel (again), the listen channel, or the question's channel or a
        new thread on it."""
        message, again, delivery = question.message, question.again, question.delivery
        if delivery is not None:
            channel = delivery.channel
            return AnswerPlace(channel, getattr(channel, "id", message.channel.id), None)
        if again is not None:
            channel_id = again.parts[0].channel_id or again.facts.channel_id
            return AnswerPlace(again.channel, channel_id, message if channel_id == message.channel.id else None)
        if question.listening is not None:
            return AnswerPlace(message.channel, message.channel.id, message)
        return await self.threads.place(question)  # the channel, or a new thread on the question
