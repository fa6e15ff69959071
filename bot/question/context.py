"""One question, as it arrives: built once from the Discord message, read by every later step.

A `Question` holds the message's facts (who, where, locale, what it replies to, files),
the one read of the configuration it needs (`bot.load.config_cache.read_config`: the server's
settings and the asker's own, with one failure policy) and a `reply` for the one-line
localized answers. The bot's parts a question uses (`Services`) are handed in
explicitly, as discord.py's examples hand a bot's dependencies to its cogs: no step
reaches back into the bot for them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import discord
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.reading.file_reads import FileReads
from bot.edge.command_names import for_discord
from bot.edge.embeds import locale_for_message
from bot.edge.sink import DiscordMessageSink
from bot.load.answers import RunningAnswers
from bot.load.config_cache import ConfigCache, ConfigSnapshot, ServerConfig, read_config
from bot.load.turn_queue import TurnQueue
from bot.load.write_behind import WriteBehind
from bot.repo.answer_records import AnswerFacts
from bot.repo.usage import Limits
from bot.settings import Settings
from bot.tools import ToolRegistry
from bot.turn import Credentials
from bot.turn.access import ProviderAccess
from providers.i18n import t
from stream.pacing import ChannelBudgets
from stream.sink import MessageSink, SentMessage, SinkError


@dataclass(frozen=True)
class Services:
    """The bot's parts a question uses, built once by the chat cog.

    `client` is the logged-in Discord client (the thought log resolves channels with it);
    `sessions` is None for a bot without a database."""

    client: discord.Client
    settings: Settings
    config: ConfigCache | None
    sessions: async_sessionmaker[AsyncSession] | None
    writes: WriteBehind | None
    credentials: Credentials
    access: ProviderAccess
    budgets: ChannelBudgets
    answers: RunningAnswers
    turns: TurnQueue
    tools: ToolRegistry
    search_tools: ToolRegistry | None = None  # `tools` and `web_search`, when the operator named a search service

    @classmethod
    def of(cls, bot: Any, budgets: ChannelBudgets, tools: ToolRegistry,
           search_tools: ToolRegistry | None = None) -> Services:
        """The parts a bot (`bot.app.LLMBot`) was built with; a test bot may lack some."""
        return cls(bot, bot.settings, getattr(bot, "config", None), getattr(bot, "sessions", None),
                   getattr(bot, "writes", None), bot.credentials, getattr(bot, "access", None) or ProviderAccess.of(bot.settings), budgets,
                   bot.answers, bot.turns, tools, search_tools)


@dataclass(frozen=True)
class Where:
    """Where a message was written: server (None in a DM), channel, the channel a thread
    belongs to, and the category the channel (or the thread's channel) sits in."""

    guild_id: int | None
    channel_id: int
    parent_id: int | None
    category_id: int | None = None


@dataclass(frozen=True)
class Exchange:
    """The member's question and the partial answer a newer message of theirs interrupted:
    the newer answer's history holds them (its own history may not: a mention in a channel
    has none)."""

    prompt: str
    name: str | None
    answer: str
    part_ids: tuple[int, ...]


@dataclass(frozen=True)
class Again:
    """An earlier answer done again (`regenerate`: its messages edited in place) or carried
    on (`continue`: the answer so far goes back to the model, the new text is appended)."""

    kind: Literal["regenerate", "continue"]
    facts: AnswerFacts
    channel: discord.abc.Messageable  # where its parts are
    parts: tuple[SentMessage, ...]
    text: str = ""  # continue: the whole answer so far
    last_text: str = ""  # continue: its last part as shown


class AnswerSink(MessageSink, Protocol):
    def close(self) -> None:
        """The answer is over (no more "typing…")."""


class Delivery(Protocol):
    """A question asked by a slash command, not by a member's message: who asked, how a
    refusal reaches them alone, and where the answer streams. Its `Question.message` is
    the command's own response, so the steps that read a message still find the
    channel, the server and an id there; nothing reads that message's author."""

    @property
    def asker(self) -> discord.Member | discord.User:
        """The member who ran the command."""

    @property
    def channel(self) -> discord.abc.Messageable:
        """Where the answer streams (no thread is opened for it)."""

    @property
    def interaction(self) -> discord.Interaction:
        """The command: its follow-ups reach the asker alone (a tool's approval prompt)."""

    async def tell(self, text: str) -> None:
        """One line to the asker alone (a refusal)."""

    def sink(self, client: discord.Client) -> AnswerSink:
        """The answer's sink."""


@dataclass(frozen=True)
class Question:
    """One message addressed to the bot, with everything later steps read of it.

    A batch (a member's back-to-back messages) is one question: `message` is the newest,
    `earlier` the ones before it, `prompt` all their texts in order. `listening` is the gap
    of the listen channel it was written in (None: the bot was addressed)."""

    message: discord.Message
    where: Where
    locale: str | None
    prompt: str  # the text without the bot's mention
    bot_id: int
    config: ConfigSnapshot
    earlier: tuple[discord.Message, ...] = ()
    listening: float | None = None
    follows: Exchange | None = None
    again: Again | None = None
    # What the batch's files were read to: each file is downloaded and read once per batch.
    reads: FileReads = field(default_factory=FileReads, compare=False, repr=False)
    delivery: Delivery | None = None  # asked by a slash command (the catch-up)

    @property
    def asker(self) -> discord.Member | discord.User:
        """Who asks: the message's author, or the member who ran the command."""
        return self.delivery.asker if self.delivery is not None else self.message.author

    @property
    def asker_id(self) -> int:
        return self.asker.id

    @property
    def limits(self) -> Limits:
        """The server's limits as the question read them (none in a DM or an unknown server)."""
        server = self.config.server
        return server.limits if server is not None else Limits()

    @property
    def first_message(self) -> discord.Message:
        """The batch's first message: the conversation before the question ends there."""
        return self.earlier[0] if self.earlier else self.message

    @property
    def message_ids(self) -> tuple[int, ...]:
        return (*(m.id for m in self.earlier), self.message.id)

    def follows_from(self, exchange: Exchange) -> Question:
        """This question after the member's interrupted `exchange`."""
        return replace(self, follows=exchange)

    def joined(self, later: Question) -> Question:
        """This question with the member's next message: one question, in order."""
        prompt = "\n\n".join(p for p in (self.prompt, later.prompt) if p)
        return replace(later, earlier=(*self.earlier, self.message), prompt=prompt, follows=self.follows,
                       reads=self.reads)

    async def reply(self, key: str, **params: Any) -> None:
        """One localized line in reply to the question; a Discord failure here is not worth more."""
        if self.delivery is not None:
            await self.delivery.tell(for_discord(t(key, self.locale, **params), self.locale))
            return
        with contextlib.suppress(SinkError):
            await DiscordMessageSink(self.message.channel, reply_to=self.message).send(
                for_discord(t(key, self.locale, **params), self.locale), reply=True)


def where_of(message: discord.Message) -> Where:
    channel = message.channel
    parent_id = channel.parent_id if isinstance(channel, discord.Thread) else None
    guild_id = message.guild.id if message.guild is not None else None
    # A thread's category is its channel's (a thread has none of its own).
    placed = channel.parent if isinstance(channel, discord.Thread) else channel
    category_id = getattr(placed, "category_id", None)
    return Where(guild_id, channel.id, parent_id, category_id)


async def arrive(message: discord.Message, prompt: str, bot_id: int, config: ConfigCache | None,
                 server: ServerConfig | None = None) -> Question:
    """The question of `message`, with its one configuration read (`server`: the server's
    part of it, read already to see whether the channel listens)."""
    where = where_of(message)
    snapshot = await read_config(config, where.guild_id, message.author.id, server)
    return Question(message, where, locale_for_message(message), prompt, bot_id, snapshot)
