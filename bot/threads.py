"""Answers in threads (`/settings threads enabled:true`).

When a server turns threads on, a mention in a text channel opens a public thread on the
question, named from its first words, and the answer streams there. Inside a thread the
bot opened, every member message continues the conversation without a mention (the
thread's recent messages are the history: `bot.history.thread_history`). Threads the bot
did not open work as channels do. Where the bot may not open a thread (no Create Public
Threads permission, or Discord refuses), it answers in the channel as before and says so
in the log once per channel: a missing permission never silences the bot.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord

from bot.conversation import ANSWERED_TYPES
from bot.discord_limits import THREAD_NAME_LIMIT
from bot.history import in_bot_thread
from providers.i18n import t

if TYPE_CHECKING:
    from bot.app import LLMBot

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


async def threads_on(bot: LLMBot, guild_id: int | None) -> bool:
    """The server's switch; off in DMs, without a database, or when it cannot be read."""
    if guild_id is None or bot.sessions is None:
        return False
    try:
        return (await bot.config.server(guild_id)).threads_enabled  # cached (`bot.config_cache`)
    except Exception:  # noqa: BLE001 - the channel answer still works when the database does not
        log.exception("reading the thread switch of guild %s failed", guild_id)
        return False


async def continues_bot_thread(bot: LLMBot, message: discord.Message) -> bool:
    """A member's message in a thread the bot opened, while the server has threads on."""
    user = bot.user
    if user is None or message.author.bot or message.type not in ANSWERED_TYPES or message.guild is None:
        return False
    return in_bot_thread(message.channel, user.id) and await threads_on(bot, message.guild.id)


class ThreadOpener:
    """Decides where an answer streams; remembers the channels it already logged a refusal for."""

    def __init__(self, bot: LLMBot) -> None:
        self.bot = bot
        self._logged: set[int] = set()

    async def place(self, message: discord.Message, prompt: str, locale: str | None) -> AnswerPlace:
        """A new thread on the question when the server wants one, else the question's channel."""
        here = AnswerPlace(message.channel, message.channel.id, message)
        if not isinstance(message.channel, discord.TextChannel) or message.guild is None:
            return here  # DMs and threads answer where they are
        if not await threads_on(self.bot, message.guild.id):
            return here
        thread = await self._open(message, thread_name(prompt, message, locale))
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
