"""The chat cog: answer a mention, a reply to the bot or a DM by streaming the model's reply.

Deliberately thin: it builds a request from the message (bot mention stripped) and its
short reply chain, and hands it to the generation turn (`bot.turn.run_generation_turn`),
which resolves the member's route (personal key, the server's models and key pool, or
the operator's environment default), rotates keys, falls back across models and shows
errors. A typing indicator runs until the first text is posted; `request_stop` is the
hook of `/stop`. The model may call the built-in tools (`bot.tools`), which see only
the message's channel. When the same member asks again in the same channel while their
answer streams, that answer stops where it is (`follow_up_interrupt`, no error) and the
new message gets its own answer. A bot without a database (no `sessions`) answers from the environment
default alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re

import discord
from discord.ext import commands

from bot.discord_sink import DiscordMessageSink
from bot.error_embed import locale_for_message
from bot.settings import Settings
from bot.thought_log import configured_channel_id, post_thought_log
from bot.tools import ToolContext, ToolLoop, default_registry
from bot.turn import Credentials, DatabaseCredentials, EnvironmentCredentials, run_generation_turn
from bot.vault import Vault
from providers import ChatRequest, Message
from providers.i18n import t
from stream.orchestrator import StreamResult
from stream.pacing import ChannelBudgets
from stream.sink import SentMessage, SinkError

log = logging.getLogger(__name__)

MAX_CHAIN = 6  # earlier messages of the reply chain sent as history
TYPING_REFRESH = 8.0  # Discord shows the indicator for about 10 seconds
ANSWERED_TYPES = (discord.MessageType.default, discord.MessageType.reply)


def strip_bot_mention(content: str, bot_id: int) -> str:
    """The prompt without `<@bot>` / `<@!bot>` mentions, whitespace collapsed at the ends."""
    return re.sub(rf"<@!?{bot_id}>", " ", content).strip()


def addresses_bot(message: discord.Message, bot_user: discord.abc.User) -> bool:
    """A human's message that mentions the bot, replies to it, or is a DM."""
    if message.author.bot or message.type not in ANSWERED_TYPES:
        return False
    if message.guild is None:
        return True
    if any(user.id == bot_user.id for user in message.mentions):
        return True
    resolved = message.reference.resolved if message.reference is not None else None
    return isinstance(resolved, discord.Message) and resolved.author.id == bot_user.id


def chain_messages(chain: list[discord.Message], bot_id: int) -> list[Message]:
    """Earlier messages (oldest first) as history; it starts with a user turn, as providers want."""
    history = [
        Message("assistant" if m.author.id == bot_id else "user", strip_bot_mention(m.content, bot_id))
        for m in chain
    ]
    history = [m for m in history if m.content]
    while history and history[0].role == "assistant":
        history.pop(0)
    return history


async def reply_chain(message: discord.Message, limit: int = MAX_CHAIN) -> list[discord.Message]:
    """The messages `message` replies to, transitively, oldest first (at most `limit`)."""
    chain: list[discord.Message] = []
    reference = message.reference
    while reference is not None and reference.message_id is not None and len(chain) < limit:
        previous = reference.resolved if isinstance(reference.resolved, discord.Message) else None
        if previous is None:
            try:
                previous = await message.channel.fetch_message(reference.message_id)
            except discord.HTTPException:
                break
        chain.append(previous)
        reference = previous.reference
    chain.reverse()
    return chain


class ChatCog(commands.Cog):
    """Answers mentions, replies to the bot and DMs (see the module docstring)."""

    def __init__(self, bot: commands.Bot, *, settings: Settings | None = None) -> None:
        self.bot = bot
        self.settings: Settings = settings if settings is not None else bot.settings  # type: ignore[attr-defined]
        self.budgets = ChannelBudgets()  # one edit budget per channel, shared by every answer
        self._stops: dict[int, asyncio.Event] = {}
        self._follow_ups: dict[tuple[int, int], asyncio.Event] = {}  # (channel, member) -> event
        self.tools = default_registry()

    def request_stop(self, channel_id: int) -> bool:
        """Stop the answer streaming in `channel_id` (what was said stays); False if none runs."""
        event = self._stops.get(channel_id)
        if event is None or event.is_set():  # nothing runs, or it is already stopping
            return False
        event.set()
        return True

    def supersede(self, channel_id: int, user_id: int) -> bool:
        """End the member's answer streaming in this channel: they asked something new."""
        event = self._follow_ups.get((channel_id, user_id))
        if event is None or event.is_set():
            return False
        event.set()
        return True

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        user = self.bot.user
        if user is None or not addresses_bot(message, user):
            return
        self.supersede(message.channel.id, message.author.id)
        try:
            await self.answer(message)
        except Exception:  # noqa: BLE001 - one failed answer must not silence the listener
            log.exception("answering message %s failed", message.id)

    @commands.Cog.listener()
    async def on_command_error(self, ctx: commands.Context, error: commands.CommandError) -> None:
        # A mention is the command prefix (commands.when_mentioned), so every question to
        # the bot is also an unknown prefix command: that one is expected, not an error.
        if not isinstance(error, commands.CommandNotFound):
            log.error("command %s failed", ctx.command, exc_info=error)

    def credentials(self) -> Credentials:
        """The database when the bot has one, else the environment default alone."""
        sessions = getattr(self.bot, "sessions", None)
        keys = getattr(self.bot, "encryption_keys", None)
        if sessions is None or not keys:
            return EnvironmentCredentials(self.settings)
        return DatabaseCredentials(sessions, Vault(keys), self.settings)

    async def answer(self, message: discord.Message) -> StreamResult | None:
        """Stream the answer to `message` into its channel through the generation turn."""
        bot_id = self.bot.user.id  # type: ignore[union-attr]
        locale = locale_for_message(message)
        sink = DiscordMessageSink(message.channel, reply_to=message, client=self.bot)
        prompt = strip_bot_mention(message.content, bot_id)
        if not prompt:
            with contextlib.suppress(SinkError):
                await sink.send(t("chat.empty_prompt", locale), reply=True)
            return None
        history = chain_messages(await reply_chain(message), bot_id)
        request = ChatRequest(messages=[*history, Message("user", prompt)])
        guild_id = message.guild.id if message.guild is not None else None
        channel_id = message.channel.id
        stop = self._stops[channel_id] = asyncio.Event()
        follow_key = (channel_id, message.author.id)
        follow_up = self._follow_ups[follow_key] = asyncio.Event()
        first_text = asyncio.Event()
        typing = asyncio.create_task(_keep_typing(sink, first_text))

        def on_first_message(_: SentMessage) -> None:
            first_text.set()

        def on_retry() -> None:  # the failed attempt's text was deleted: typing again
            nonlocal typing
            if first_text.is_set():
                first_text.clear()
                typing.cancel()
                typing = asyncio.create_task(_keep_typing(sink, first_text))

        try:
            outcome = await run_generation_turn(
                credentials=self.credentials(), guild_id=guild_id, user_id=message.author.id,
                request=request, sink=sink, budget=self.budgets.for_channel(channel_id),
                locale=locale, stop_event=stop, on_first_message=on_first_message, on_retry=on_retry,
                follow_up_event=follow_up,
                tool_loop=ToolLoop(self.tools, ToolContext(channel=message.channel)),
            )
        finally:
            first_text.set()
            typing.cancel()
            if self._stops.get(channel_id) is stop:
                del self._stops[channel_id]
            if self._follow_ups.get(follow_key) is follow_up:
                del self._follow_ups[follow_key]
        result = outcome.result
        if result is None:
            return None
        if result.status == "empty_response" and not result.error_shown:
            with contextlib.suppress(SinkError):
                await sink.send(t("chat.empty_response", locale), reply=True)
        sessions = getattr(self.bot, "sessions", None)
        if guild_id is not None and sessions is not None and (result.thoughts or result.captured_blocks):
            provider = outcome.target.provider if outcome.target is not None else None
            channel_id = await configured_channel_id(sessions, guild_id)
            await post_thought_log(self.bot, channel_id, guild_id=guild_id, thoughts=result.thoughts,
                                   blocks=result.captured_blocks, provider=provider,
                                   serving_provider=result.serving_provider, locale=locale)
        return result


async def _keep_typing(sink: DiscordMessageSink, first_text: asyncio.Event) -> None:
    """Show "typing…" until the first text is posted (or the answer ends)."""
    while not first_text.is_set():
        try:
            await sink.typing()
        except SinkError:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(first_text.wait(), TYPING_REFRESH)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(ChatCog(bot))
