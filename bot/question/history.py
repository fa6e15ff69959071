"""The conversation a question continues, as model turns: what the model is shown before it.

- A reply continues its reply chain. A reply to any message of the bot's split answer
  continues the whole answer: its parts are known to this process while it streams and
  lately after (`bot.load.answers`) and recorded in the database (`bot.repo.conversation`),
  so the answer is rebuilt from all its parts' current contents as one assistant turn
  and followed back through the question it answered.
- A DM without a reply continues the recent DM messages (the last half hour).
- In a thread the bot opened (`bot.question.threads`), the thread is the conversation: its
  messages from the question it was opened on.
- The server's history depth (`/settings history`) bounds the number of earlier
  messages (a whole answer counts as one); what was left out is counted, so the answer
  can say so.
- In servers, user turns carry the member's display name (the providers render it);
  the bot's own turns stay plain.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import discord
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.edge.command_names import for_discord
from bot.load.answers import RunningAnswers
from bot.repo.conversation import MAX_HISTORY_MESSAGES, RecordedAnswer, answer_of
from providers import Message
from providers.i18n import t
from stream.buffer import STREAMING_INDICATOR
from stream.sink import MessageSink, SinkError

log = logging.getLogger(__name__)

DM_WINDOW = timedelta(minutes=30)
DM_FETCH = 100  # one page of DM history: enough for the deepest bound and its parts
NOTICE_PREFIX = "-# "  # the bot's small notice lines (fallback, history cut) are not answers
CONVERSATION_TYPES = (discord.MessageType.default, discord.MessageType.reply)  # not system messages


@dataclass
class History:
    """Earlier turns, oldest first; `left_out` earlier messages did not fit the bound
    (`left_out_more`: the count stopped at its own bound, there are even more);
    `sources`: the Discord messages of the reply chain the turns came from (their files
    travel with the question)."""

    messages: list[Message] = field(default_factory=list)
    sources: list[discord.Message] = field(default_factory=list)
    left_out: int = 0
    left_out_more: bool = False


def strip_bot_mention(content: str, bot_id: int) -> str:
    """The text without `<@bot>` / `<@!bot>` mentions, whitespace collapsed at the ends."""
    return re.sub(rf"<@!?{bot_id}>", " ", content).strip()


def speaker(message: discord.Message) -> str | None:
    """The name a user turn carries: the member's display name in servers, none in DMs."""
    return message.author.display_name if message.guild is not None else None


def user_text(message: discord.Message, bot_id: int) -> str:
    """A member's words; for a message of files only, which files (they travel with the
    question: `bot.capabilities.reading.attachments`), so the turn is not empty."""
    text = strip_bot_mention(message.content, bot_id)
    if text or not message.attachments:
        return text
    return "(attached: " + ", ".join(attachment.filename for attachment in message.attachments) + ")"


def user_turn(message: discord.Message, bot_id: int) -> Message:
    return Message("user", user_text(message, bot_id), name=speaker(message))


async def referenced(message: discord.Message) -> discord.Message | None:
    """The message `message` replies to, or None (no reply, deleted, not readable)."""
    reference = message.reference
    if reference is None or reference.message_id is None:
        return None
    if isinstance(reference.resolved, discord.Message):
        return reference.resolved
    return await fetch(message.channel, reference.message_id)


async def fetch(channel: discord.abc.Messageable, message_id: int) -> discord.Message | None:
    try:
        return await channel.fetch_message(message_id)
    except discord.HTTPException:
        return None


@dataclass(frozen=True)
class Recall:
    """Where a walk finds the whole answer a message is part of: this process first (an
    answer streaming or just finished, whose record may not be written yet), then the
    database (`sessions`; None without one)."""

    answers: RunningAnswers | None = None
    sessions: async_sessionmaker[AsyncSession] | None = None

    def streaming_text(self, message_id: int) -> str | None:
        """The whole text of an answer still being delivered here that holds `message_id`."""
        return self.answers.text_holding(message_id) if self.answers is not None else None

    async def answer_holding(self, message_id: int) -> RecordedAnswer | None:
        known = self.answers.holding(message_id) if self.answers is not None else None
        if known is not None or self.sessions is None:
            return known
        try:
            async with self.sessions() as session:
                return await answer_of(session, message_id)
        except Exception:  # noqa: BLE001 - history is best effort: the question still gets answered
            log.exception("reading the recorded answer of message %s failed", message_id)
            return None


async def whole_answer(part: discord.Message, answer: RecordedAnswer) -> str:
    """Every part's current text, in order (a deleted part is left out; a part still
    streaming without its "writing" mark)."""
    texts = []
    for message_id in answer.message_ids:
        message = part if message_id == part.id else await fetch(part.channel, message_id)
        if message is not None and message.content:
            texts.append(message.content.removesuffix(STREAMING_INDICATOR))
    return "\n".join(texts)


@dataclass
class _Walk:
    """One reply-chain walk: turns newest first, then only counting past the bound."""

    recall: Recall
    bot_id: int
    limit: int
    turns: list[Message] = field(default_factory=list)
    sources: list[discord.Message] = field(default_factory=list)
    left_out: int = 0
    seen: set[int] = field(default_factory=set)

    async def step(self, message: discord.Message) -> discord.Message | None:
        """Take in `message` (a whole answer for a recorded part); return the one before it."""
        self.seen.add(message.id)
        counting = len(self.turns) >= self.limit
        if message.author.id != self.bot_id:
            turn = None if counting else user_turn(message, self.bot_id)
            return self._took(turn, message, await referenced(message))
        answer = await self.recall.answer_holding(message.id)
        if answer is None:  # an answer from before parts were recorded, or a notice
            turn = None if counting else Message("assistant", without_notes(message.content))
            return self._took(turn, message, await referenced(message))
        self.seen.update(answer.message_ids)
        streaming = self.recall.streaming_text(message.id)
        whole = streaming if streaming is not None else await whole_answer(message, answer)
        turn = None if counting else Message("assistant", without_notes(whole))
        return self._took(turn, message, await fetch(message.channel, answer.question_id))

    def _took(self, turn: Message | None, message: discord.Message,
                    previous: discord.Message | None) -> discord.Message | None:
        if turn is not None:
            self.sources.append(message)
            if turn.content:
                self.turns.append(turn)
        elif message.content:
            self.left_out += 1
        return previous if previous is not None and previous.id not in self.seen else None


async def reply_history(message: discord.Message, bot_id: int, limit: int, recall: Recall) -> History:
    """The reply chain before `message`, at most `limit` messages (a whole answer is one)."""
    walk = _Walk(recall, bot_id, limit)
    current = await referenced(message)
    steps = 0
    while current is not None and steps < limit + MAX_HISTORY_MESSAGES:
        steps += 1
        current = await walk.step(current)
    turns = list(reversed(walk.turns))
    left_out = walk.left_out
    while turns and turns[0].role == "assistant":  # providers want the history to open with a user
        turns.pop(0)
        left_out += 1 if left_out else 0  # cut by the bound: one more left out
    return History(turns, list(reversed(walk.sources)), left_out, left_out_more=current is not None)


def without_notes(text: str) -> str:
    """An answer's text without the note lines under it (sources, memory saved, reminder
    set): they told the member something, the model did not say them. A text that is
    only notes (a notice) stays as it is."""
    lines = text.split("\n")
    while lines and (lines[-1].startswith(NOTICE_PREFIX) or not lines[-1].strip()):
        lines.pop()
    return "\n".join(lines) if lines else text


def in_bot_thread(channel: object, bot_id: int) -> bool:
    """A thread the bot opened (Discord names its creator the thread's owner)."""
    return isinstance(channel, discord.Thread) and channel.owner_id == bot_id


def _grouped(messages: Sequence[discord.Message], bot_id: int,
             named: bool) -> list[tuple[Message, list[discord.Message]]]:
    """Messages (oldest first) as turns with the messages each came from: consecutive bot
    messages (a split answer) are one assistant turn; notices and embed-only messages are
    not conversation; `named`: user turns carry the member's name."""
    turns: list[tuple[Message, list[discord.Message]]] = []
    for message in messages:
        if message.author.id == bot_id:
            if not message.content or message.content.startswith(NOTICE_PREFIX):
                continue
            if turns and turns[-1][0].role == "assistant":
                last, sources = turns[-1]
                turns[-1] = (Message("assistant", f"{last.content}\n{without_notes(message.content)}"),
                             [*sources, message])
                continue
            turns.append((Message("assistant", without_notes(message.content)), [message]))
        else:
            turn = user_turn(message, bot_id) if named else Message("user", user_text(message, bot_id))
            if turn.content:
                turns.append((turn, [message]))
    return turns


def _bounded(grouped: list[tuple[Message, list[discord.Message]]], limit: int, more: bool) -> History:
    """The last `limit` turns (opening with a user turn), the messages they came from (their
    files travel with the question), and how many were left out."""
    kept = grouped[len(grouped) - limit:] if limit else []
    while kept and kept[0][0].role == "assistant":
        kept.pop(0)
    sources = [message for _, messages in kept for message in messages]
    return History([turn for turn, _ in kept], sources, len(grouped) - len(kept), left_out_more=more)


async def _recent(channel: discord.abc.Messageable, before: discord.Message,
                  since: datetime | None) -> tuple[list[discord.Message], bool]:
    """The channel's messages before `before` (newer than `since`), oldest first, and
    whether the page was full (there may be more)."""
    recent: list[discord.Message] = []
    read = 0
    try:
        async for earlier in channel.history(limit=DM_FETCH, before=before):
            read += 1
            if since is not None and earlier.created_at < since:
                break
            if earlier.id < before.id and earlier.type in CONVERSATION_TYPES:
                recent.append(earlier)
    except discord.HTTPException:
        log.warning("the recent messages of channel %s could not be read", getattr(channel, "id", "?"))
    return list(reversed(recent)), read >= DM_FETCH


async def dm_history(message: discord.Message, bot_id: int, limit: int) -> History:
    """The DM messages of the last half hour before `message`, at most `limit` turns."""
    recent, more = await _recent(message.channel, message, message.created_at - DM_WINDOW)
    return _bounded(_grouped(recent, bot_id, named=False), limit, more)


async def thread_starter(thread: discord.Thread) -> discord.Message | None:
    """The channel message the thread was opened on (a thread has that message's id)."""
    parent = thread.parent
    if not isinstance(parent, discord.TextChannel):
        return None
    return await fetch(parent, thread.id)


async def thread_history(message: discord.Message, bot_id: int, limit: int) -> History:
    """A bot thread's messages before `message`, from the question it was opened on, at
    most `limit` turns (a split answer is one); members are named as in a reply chain."""
    recent, more = await _recent(message.channel, message, None)
    if not more and isinstance(message.channel, discord.Thread):
        starter = await thread_starter(message.channel)
        recent = [starter, *recent] if starter is not None else recent
    return _bounded(_grouped(recent, bot_id, named=True), limit, more)


ASIDE_PREFIX = "//"  # a listen-channel message members address to each other, not to the bot


async def listen_history(message: discord.Message, bot_id: int, depth: int) -> History:
    """The history of a question in a listen channel (no mention, no reply chain: the
    channel is the conversation): its last `depth` messages before `message`, oldest
    first, members' as user turns carrying their display names (rendered `Name: text`),
    the bot's own as assistant turns (a split answer is one), leaving out `//` asides,
    other bots and system messages. One REST page of `depth` messages, so a busy channel
    costs one request; nothing is counted as left out, since a channel has no beginning
    the members would expect the model to have seen."""
    if depth <= 0:
        return History()
    recent: list[discord.Message] = []
    try:
        async for earlier in message.channel.history(limit=depth, before=message):
            aside = earlier.content.lstrip().startswith(ASIDE_PREFIX)
            other_bot = earlier.author.bot and earlier.author.id != bot_id
            if earlier.type in CONVERSATION_TYPES and not aside and not other_bot:
                recent.append(earlier)
    except discord.HTTPException:
        log.warning("the recent messages of channel %s could not be read", getattr(message.channel, "id", "?"))
    history = _bounded(_grouped(list(reversed(recent)), bot_id, named=True), depth, more=False)
    history.left_out = 0
    return history


async def conversation_history(message: discord.Message, bot_id: int, limit: int, recall: Recall) -> History:
    """What `message` continues, at most `limit` earlier messages: in a thread the bot
    opened, the thread; in a DM without a reply, the recent DM; otherwise its reply chain."""
    if in_bot_thread(message.channel, bot_id):
        return await thread_history(message, bot_id, limit)
    if message.guild is None and message.reference is None:
        return await dm_history(message, bot_id, limit)
    return await reply_history(message, bot_id, limit, recall)


def left_out_note(history: History, locale: str | None) -> str | None:
    """The small line saying how many earlier messages the model did not see, if any."""
    if not history.left_out:
        return None
    count = f"{history.left_out}+" if history.left_out_more else str(history.left_out)
    return NOTICE_PREFIX + for_discord(t("chat.history_cut", locale, count=count), locale)


async def say_left_out(history: History, sink: MessageSink, shown: bool, locale: str | None) -> None:
    """Once the answer is shown, the small line saying what the history left out (a notice
    under the answer, so "typing…" and the first words are not delayed)."""
    note = left_out_note(history, locale)
    if note is not None and shown:
        with contextlib.suppress(SinkError):
            await sink.send(note, reply=False)
