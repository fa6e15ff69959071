"""The chat cog: answer a mention, a reply to the bot or a DM by streaming the model's reply.

Deliberately thin: it picks the operator's environment-default route, builds a request
from the message (bot mention stripped) and its short reply chain, and hands the
normalized stream to the stream layer's orchestrator, which does the delivering. A
typing indicator runs until the first text is posted; a provider error is shown by the
orchestrator as a localized embed. The generation turn (key rotation, model fallback,
member keys, tools, /stop) builds on `ChatCog.answer`; `request_stop` is its stop hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import discord
from discord.ext import commands

from bot.discord_sink import DiscordMessageSink
from bot.error_embed import locale_for_message
from bot.settings import Settings
from bot.thought_log import configured_channel_id, post_thought_log
from providers import ChatRequest, Message, create_adapter, normalized_stream
from providers.i18n import t
from stream.buffer import MessageDelivery
from stream.error_embed_spec import error_embed_renderer
from stream.orchestrator import StreamResult, run_stream
from stream.pacing import ChannelBudgets
from stream.sink import SentMessage, SinkError

log = logging.getLogger(__name__)

MAX_CHAIN = 6  # earlier messages of the reply chain sent as history
TYPING_REFRESH = 8.0  # Discord shows the indicator for about 10 seconds
PROVIDER_TIMEOUT = 120.0  # seconds without a byte before the provider counts as stalled
ANSWERED_TYPES = (discord.MessageType.default, discord.MessageType.reply)


@dataclass(frozen=True)
class DefaultRoute:
    """The operator's environment default: provider, model, base URL and the pool's first key."""

    provider: str
    model: str
    base_url: str | None
    api_key: str = field(repr=False)


def default_route(settings: Settings) -> DefaultRoute | None:
    """The route from DEFAULT_TEXT_*; None when provider, model or a key is missing."""
    keys = settings.default_text_api_keys()
    if not settings.DEFAULT_TEXT_PROVIDER or not settings.DEFAULT_TEXT_MODEL or not keys:
        return None
    return DefaultRoute(settings.DEFAULT_TEXT_PROVIDER, settings.DEFAULT_TEXT_MODEL,
                        settings.DEFAULT_TEXT_BASE_URL, keys[0])


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

    def request_stop(self, channel_id: int) -> bool:
        """Stop the answer streaming in `channel_id` (what was said stays); False if none runs."""
        event = self._stops.get(channel_id)
        if event is None:
            return False
        event.set()
        return True

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        user = self.bot.user
        if user is None or not addresses_bot(message, user):
            return
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

    async def answer(self, message: discord.Message) -> StreamResult | None:
        """Stream the default route's answer to `message` into its channel."""
        bot_id = self.bot.user.id  # type: ignore[union-attr]
        locale = locale_for_message(message)
        sink = DiscordMessageSink(message.channel, reply_to=message, client=self.bot)
        route = default_route(self.settings)
        prompt = strip_bot_mention(message.content, bot_id)
        adapter = None
        if route is not None and prompt:
            try:
                adapter = create_adapter(route.provider, api_key=route.api_key, model=route.model,
                                         base_url=route.base_url, timeout=PROVIDER_TIMEOUT)
            except ValueError as exc:  # e.g. custom without DEFAULT_TEXT_BASE_URL; never holds the key
                log.error("the default text route cannot be used: %s", exc)
        if route is None or adapter is None:
            key = "chat.not_configured" if route is None or prompt else "chat.empty_prompt"
            with contextlib.suppress(SinkError):
                await sink.send(t(key, locale), reply=True)
            return None
        history = chain_messages(await reply_chain(message), bot_id)
        request = ChatRequest(messages=[*history, Message("user", prompt)])
        result = await self._stream(message, sink, adapter, request, route, locale)
        if result.status == "empty_response" and not result.error_shown:
            with contextlib.suppress(SinkError):
                await sink.send(t("chat.empty_response", locale), reply=True)
        guild_id = message.guild.id if message.guild is not None else None
        sessions = getattr(self.bot, "sessions", None)
        if guild_id is not None and sessions is not None and (result.thoughts or result.captured_blocks):
            channel_id = await configured_channel_id(sessions, guild_id)
            await post_thought_log(self.bot, channel_id, guild_id=guild_id, thoughts=result.thoughts,
                                   blocks=result.captured_blocks, provider=route.provider,
                                   serving_provider=result.serving_provider, locale=locale)
        return result

    async def _stream(self, message: discord.Message, sink: DiscordMessageSink, adapter: Any,
                      request: ChatRequest, route: DefaultRoute, locale: str | None) -> StreamResult:
        channel_id = message.channel.id
        stop = self._stops[channel_id] = asyncio.Event()
        first_text = asyncio.Event()

        def on_first_message(_: SentMessage) -> None:
            first_text.set()

        delivery = MessageDelivery(sink, budget=self.budgets.for_channel(channel_id),
                                   on_first_message=on_first_message)
        typing = asyncio.create_task(_keep_typing(sink, first_text))
        try:
            return await run_stream(
                normalized_stream(adapter, request), delivery, stop_event=stop,
                locale=locale, provider=route.provider,
                render_error=error_embed_renderer(locale=locale, credential_source="server",
                                                  known_secrets=[route.api_key]),
            )
        finally:
            first_text.set()
            typing.cancel()
            if self._stops.get(channel_id) is stop:
                del self._stops[channel_id]
            closer = getattr(adapter, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()


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
