"""Answers in threads (`/settings threads enabled:true`).

When a server turns threads on, a mention in a text channel opens a public thread on the
question, named from its first words, and the answer streams there. Inside a thread the
bot opened, every member message continues the conversation without a mention (the
thread's recent messages are the history: `bot.question.history.thread_history`). Threads the bot
did not open work as channels do. A thread is opened only for an asker who could open
one there themselves (Create Public Threads), so the bot never opens public threads on
behalf of members the server keeps from doing so. Where the bot may not open a thread
(no Create Public Threads permission, or Discord refuses), it answers in the channel as
before and says so in the log once per channel: a missing permission never silences the bot.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord

from bot.edge.limits import THREAD_NAME_LIMIT
from bot.question.conversation import ANSWERED_TYPES
from bot.question.history import in_bot_thread
from providers.i18n import t

if TYPE_CHECKING:
    from bot.question.context import Question

log = logging.getLogger(__name__)

NAME_WORDS = 8  # "named from its first words"
NAME_SOFT_LIMIT = 60  # stop adding words past this many characters
MAX_LOGGED_CHANNELS = 10_000
_MARKUP = re.compile(r"<a?(:\w+:)\d+>|<(?:@[!&]?|#)\d+>|[*_~`|>#]")


@dataclass(frozen=True)
class AnswerPlace:
    """Where an answer streams, and the message it replies to there (none across channels)."""

    channel: discord.abc.Messageable
    channel_id: int
    reply_to: discord.Message | None


def _plain(prompt: str) -> str:
    """The prompt without mentions and markdown symbols (custom emoji keep their name)."""
    return " ".join(_MARKUP.sub(lambda m: m.group(1) or " ", prompt).split())


def _first_words(text: str) -> str:
    name = ""
    for word in text.split()[:NAME_WORDS]:
        candidate = f"{name} {word}".strip()
        if name and len(candidate) > NAME_SOFT_LIMIT:
            break
        name = candidate
    return name.rstrip(",;:-")


def thread_name(prompt: str, message: discord.Message, locale: str | None) -> str:
    """The question's first words, else its first file's name, else "Question from <name>";
    never empty and within Discord's 100 characters."""
    name = _first_words(_plain(prompt))
    if not name and message.attachments:
        name = message.attachments[0].filename
    if not name:
        name = t("chat.thread_name", locale, name=message.author.display_name)
    return name if len(name) <= THREAD_NAME_LIMIT else name[:THREAD_NAME_LIMIT - 1].rstrip() + "…"


def threads_on(question: Question) -> bool:
    """The server's switch, from the question's configuration; off in DMs, without a
    database, or when it could not be read."""
    server = question.config.server
    return question.where.guild_id is not None and server is not None and server.threads_enabled


def in_thread_of_bot(message: discord.Message, bot_id: int) -> bool:
    """A member's message in a thread the bot opened: it may continue that thread's
    conversation without a mention (when the server still has threads on)."""
    return (not message.author.bot and message.type in ANSWERED_TYPES and message.guild is not None
            and in_bot_thread(message.channel, bot_id))


def _may_open_threads(message: discord.Message) -> bool:
    """The asker holds Create Public Threads in the channel (a member, not a webhook)."""
    channel, author = message.channel, message.author
    return (isinstance(author, discord.Member) and isinstance(channel, discord.TextChannel)
            and channel.permissions_for(author).create_public_threads)


class ThreadOpener:
    """Decides where an answer streams; remembers the channels it already logged a refusal for."""

    def __init__(self) -> None:
        self._logged: set[int] = set()

    async def place(self, question: Question) -> AnswerPlace:
        """A new thread on the question when the server wants one and the asker may open
        public threads there, else the question's channel."""
        message = question.message
        here = AnswerPlace(message.channel, message.channel.id, message)
        if not isinstance(message.channel, discord.TextChannel) or not threads_on(question):
            return here  # DMs and threads answer where they are
        if not _may_open_threads(message):
            return here  # the asker could not open this thread themselves
        thread = await self._open(message, thread_name(question.prompt, message, question.locale))
        return AnswerPlace(thread, thread.id, None) if thread is not None else here

    async def _open(self, message: discord.Message, name: str) -> discord.Thread | None:
        channel = message.channel
        assert isinstance(channel, discord.TextChannel) and message.guild is not None
        if not channel.permissions_for(message.guild.me).create_public_threads:
            self._refused(channel.id, "the bot lacks the Create Public Threads permission")
            return None
        try:
            return await message.create_thread(name=name)
        except discord.Forbidden:
            self._refused(channel.id, "Discord refused to create a thread (missing permissions)")
        except discord.HTTPException as exc:
            self._refused(channel.id, f"Discord refused to create a thread ({exc.status}, code {exc.code})")
        return None

    def _refused(self, channel_id: int, why: str) -> None:
        if channel_id in self._logged:
            return
        if len(self._logged) >= MAX_LOGGED_CHANNELS:
            self._logged.clear()
        self._logged.add(channel_id)
        log.warning("answering in channel %s instead of a thread: %s", channel_id, why)
