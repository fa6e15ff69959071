"""An earlier answer, found from the button pressed under it, and its question rebuilt.

Regenerate and Continue answer the same question again: the same messages (a batch has
several), so the same history, persona, parameters and route as the first time, read
again now. The answer is found from the message the button is on (this process knows its
recent answers; the database knows the rest, also after a restart), and its buttons
stop changing it after 24 hours or once a newer answer continued it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import discord

from bot.question.context import Again, Question, Services, arrive
from bot.question.history import Recall, fetch, strip_bot_mention, whole_answer
from bot.repo.answer_records import AnswerFacts, answer_facts, has_newer
from bot.repo.conversation import RecordedAnswer
from stream.buffer import STREAMING_INDICATOR
from stream.sink import SentMessage

log = logging.getLogger(__name__)

CHANGEABLE_FOR = timedelta(hours=24)


@dataclass(frozen=True)
class Found:
    """The answer a button is under: its parts and its facts."""

    record: RecordedAnswer
    facts: AnswerFacts


class Unchangeable(Exception):
    """Why a press cannot act on the answer; `key` is the localized line for the presser."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


async def find_answer(services: Services, message_id: int, asker_id: int, guild_id: int | None) -> Found | None:
    """The answer whose part `message_id` is, with its facts (a plain answer's from its
    parts and the button's `asker_id`: it has no row); None when unknown."""
    record = await Recall(services.answers, services.sessions).answer_holding(message_id)
    if record is None or not record.message_ids:
        return None
    first = record.message_ids[0]
    facts = services.answers.facts_of(first)
    if facts is None and services.sessions is not None:
        try:
            async with services.sessions() as session:
                facts = await answer_facts(session, record, asker_id, guild_id)
        except Exception:  # noqa: BLE001 - an unreadable record is an unknown answer to the presser
            log.exception("reading the facts of answer %s failed", first)
    return Found(record, facts) if facts is not None else None


async def check_changeable(services: Services, found: Found) -> None:
    """Raise `Unchangeable` when the answer is too old, has a newer answer after it, or
    is still being written."""
    facts = found.facts
    if datetime.now(UTC) - facts.created_at > CHANGEABLE_FOR or await _continued(services, facts.first_message_id):
        raise Unchangeable("chat.controls.expired")
    if facts.question_ids and services.answers.by_question(facts.question_ids[-1]) is not None:
        raise Unchangeable("chat.controls.busy")


async def _continued(services: Services, first_message_id: int) -> bool:
    if services.answers.continued(first_message_id):
        return True
    if services.sessions is None:
        return False
    async with services.sessions() as session:
        return await has_newer(session, first_message_id)


async def question_again(services: Services, pressed: discord.Message, found: Found,
                         kind: str) -> Question | None:
    """The answer's question rebuilt for `kind` (regenerate or continue); None when its
    messages are gone."""
    me = services.client.user
    messages = await _question_messages(services.client, pressed.channel, found.facts.question_ids)
    if me is None or not messages:
        return None
    last = messages[-1]
    prompts = [strip_bot_mention(m.content, me.id) for m in messages]
    question = await arrive(last, "\n\n".join(p for p in prompts if p), me.id, services.config)
    server = question.config.server
    listening = server.listen_channels.get(last.channel.id) if server is not None and last.guild else None
    parts = tuple(SentMessage(mid, pressed.channel.id) for mid in found.record.message_ids)
    text = last_text = ""
    if kind == "continue":
        text = await whole_answer(pressed, found.record)
        last_text = pressed.content.removesuffix(STREAMING_INDICATOR)
    again = Again("continue" if kind == "continue" else "regenerate", found.facts, pressed.channel, parts, text,
                  last_text)
    return replace(question, earlier=tuple(messages[:-1]), listening=listening, again=again)


async def _question_messages(client: discord.Client, channel: discord.abc.Messageable,
                             ids: Sequence[int]) -> list[discord.Message]:
    """The question's messages, in order: from the client's message cache (kept current by
    the gateway), else read in the answer's channel or — for an answer in a thread opened
    on its question — in the thread's parent channel."""
    cached = {m.id: m for m in client.cached_messages if m.id in ids}
    found: list[discord.Message] = []
    for message_id in ids:
        message = cached.get(message_id) or await fetch(channel, message_id)
        if message is None and isinstance(channel, discord.Thread) and channel.parent is not None:
            message = await fetch(channel.parent, message_id)
        if message is not None:
            found.append(message)
    return found
