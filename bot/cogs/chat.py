"""The chat cog: answer a mention, a reply to the bot or a DM by streaming the model's reply.

Deliberately thin: it builds a request from the message (bot mention stripped) and its
short reply chain and hands it to the generation turn (`bot.turn.run_generation_turn`),
which resolves the member's route, rotates keys, falls back across models and shows
errors. The model may call the built-in tools (`bot.tools`), which see only the
message's channel. The cog also owns the running answers (`bot.answers`): when the same
member asks again in the same channel while their answer streams, that answer stops
where it is and the new message gets its own answer; `/stop` ends the caller's latest
answer in the channel, or — for members who may manage messages — every answer there.
"""

from __future__ import annotations

import contextlib
import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.admission import AdmissionGate
from bot.answers import RunningAnswer, RunningAnswers
from bot.app import LLMBot
from bot.cogs.base import reply
from bot.conversation import addresses_bot, build_request, strip_bot_mention
from bot.discord_sink import DiscordMessageSink
from bot.error_embed import locale_for_message
from bot.history import after_answer, conversation_history
from bot.settings import Settings
from bot.thought_log import Reasoning, configured_channel_id, post_error_detail, post_thought_log
from bot.threads import ThreadOpener, continues_bot_thread
from bot.tools import ToolContext, ToolLoop, default_registry
from bot.translator import lstr
from bot.turn import TurnContext, TurnOutcome, run_generation_turn
from bot.turn_queue import answer_in_turn
from bot.usage.record import record_usage
from providers.endpoint_check import EndpointPolicy
from providers.i18n import t
from stream.limits import StreamLimits
from stream.orchestrator import StreamResult
from stream.pacing import ChannelBudgets
from stream.sink import SinkError

log = logging.getLogger(__name__)

def answer_limits(settings: Settings) -> StreamLimits:
    """The operator's bounds of one answer."""
    return StreamLimits(first_content_seconds=settings.FIRST_TOKEN_DEADLINE_SECONDS,
                        idle_seconds=settings.ANSWER_IDLE_SECONDS, total_seconds=settings.ANSWER_DEADLINE_SECONDS,
                        max_calls=settings.MAX_TOOL_CALLS_PER_RESPONSE, max_thought_chars=settings.MAX_REASONING_CHARS)


class ChatCog(commands.Cog):
    """Answers mentions, replies to the bot and DMs (see the module docstring)."""

    def __init__(self, bot: LLMBot) -> None:
        self.bot = bot
        self.budgets = ChannelBudgets()  # one edit budget per channel, shared by every answer
        self.answers: RunningAnswers = bot.answers
        self.tools = default_registry()
        self.gate = AdmissionGate(bot)  # where and for whom the bot answers
        self.threads = ThreadOpener(bot)  # a thread per question where the server wants it

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        user = self.bot.user
        if user is None or self.answers.closed:
            return
        if not addresses_bot(message, user) and not await continues_bot_thread(self.bot, message):
            return
        if not await self.gate.admits(message):
            return
        mine = self.answers.latest_of(message.channel.id, message.author.id)
        if mine is not None:
            self.answers.fire([mine], "follow_up")
        if len(self.answers.of_member(message.author.id)) >= self.bot.settings.MAX_ANSWERS_PER_MEMBER:
            await self._refuse_busy(message)
            return
        try:
            await answer_in_turn(self.bot, message, self.answer)  # waits its turn (MAX_CONCURRENT_ANSWERS)
        except Exception:  # noqa: BLE001 - one failed answer must not silence the listener
            log.exception("answering message %s failed", message.id)

    @commands.Cog.listener()
    async def on_command_error(self, ctx: commands.Context, error: commands.CommandError) -> None:
        # A mention is the command prefix (commands.when_mentioned), so every question to
        # the bot is also an unknown prefix command: that one is expected, not an error.
        if not isinstance(error, commands.CommandNotFound):
            log.error("command %s failed", ctx.command, exc_info=error)

    @app_commands.command(name=lstr("commands.stop.name"), description=lstr("commands.stop.description"))
    async def stop(self, interaction: discord.Interaction) -> None:
        """The caller's latest answer here; every answer here for members who manage messages."""
        channel_id = interaction.channel_id or 0
        if interaction.permissions.manage_messages:
            count = self.answers.fire(self.answers.in_channel(channel_id), "stop")
            if count:
                await reply(interaction, "commands.stop.stopped_all", count=count)
                return
        else:
            mine = self.answers.latest_of(channel_id, interaction.user.id)
            if mine is not None and self.answers.fire([mine], "stop"):
                await reply(interaction, "commands.stop.stopped", question=self._link(interaction, mine))
                return
        await reply(interaction, "commands.stop.nothing")

    async def _refuse_busy(self, message: discord.Message) -> None:
        """The member already has as many answers streaming as one member may."""
        text = t("chat.member_busy", locale_for_message(message), count=self.bot.settings.MAX_ANSWERS_PER_MEMBER)
        with contextlib.suppress(SinkError):
            await DiscordMessageSink(message.channel, reply_to=message).send(text, reply=True)

    @staticmethod
    def _link(interaction: discord.Interaction, answer: RunningAnswer) -> str:
        guild = str(answer.guild_id) if answer.guild_id is not None else "@me"
        return f"https://discord.com/channels/{guild}/{answer.channel_id}/{answer.question_id}"

    async def answer(self, message: discord.Message) -> StreamResult | None:
        """Stream the answer to `message` into its channel (or its new thread) through the
        generation turn; a question of files only is asked by its files."""
        bot_id = self.bot.user.id if self.bot.user is not None else 0
        locale = locale_for_message(message)
        prompt = strip_bot_mention(message.content, bot_id)
        if not prompt and not message.attachments:
            with contextlib.suppress(SinkError):
                await DiscordMessageSink(message.channel, reply_to=message).send(t("chat.empty_prompt", locale),
                                                                                 reply=True)
            return None
        settings = self.bot.settings
        history = await conversation_history(self.bot, message)
        request = await build_request(self.bot, message, prompt, history)
        guild_id = message.guild.id if message.guild is not None else None
        place = await self.threads.place(message, prompt, locale)  # the channel, or a new thread on the question
        channel_id = place.channel_id
        running = self.answers.start(RunningAnswer(channel_id, message.author.id, message.id, guild_id))
        sink = DiscordMessageSink(place.channel, reply_to=place.reply_to, client=self.bot, typing=True)
        ctx = TurnContext(user_id=message.author.id, guild_id=guild_id, channel_id=channel_id,
                          locale=locale, sink=sink, budget=self.budgets.for_channel(channel_id),
                          interrupt=running.interrupt, limits=answer_limits(settings),
                          max_messages=settings.MAX_MESSAGES_PER_ANSWER,
                          endpoint_policy=EndpointPolicy(allow_private=settings.ALLOW_PRIVATE_ENDPOINTS,
                                                         reasoning_effort=settings.CUSTOM_REASONING_EFFORT),
                          clients=getattr(self.bot, "clients", None))  # a bare test bot has no pool
        try:
            outcome = await run_generation_turn(ctx, request, self.bot.credentials,
                                                ToolLoop(self.tools, ToolContext(message.channel, message.author)))
        finally:
            sink.close()
            self.answers.finish(running)
        await after_answer(self.bot, message, history, sink, outcome.result, locale)  # record parts, history note
        await self._after(ctx, outcome, message.channel)
        await record_usage(self.bot, ctx, request, outcome)  # queued after delivery
        return outcome.result

    async def _after(self, ctx: TurnContext, outcome: TurnOutcome, source: discord.abc.Messageable) -> None:
        """An empty answer is said so; reasoning goes to the thought-log channel."""
        result = outcome.result
        if result is None:
            return
        if result.status == "empty_response" and not outcome.error_shown:
            with contextlib.suppress(SinkError):
                await ctx.sink.send(t("chat.empty_response", ctx.locale), reply=True)
        sessions = self.bot.sessions
        wanted = result.thoughts or result.captured_blocks or outcome.private_detail
        if ctx.guild_id is None or sessions is None or not wanted:
            return
        channel_id = await configured_channel_id(self.bot.config, ctx.guild_id)
        if outcome.private_detail:
            await post_error_detail(self.bot, ctx.guild_id, channel_id, outcome.private_detail, ctx.locale)
        provider = outcome.target.provider if outcome.target is not None else "unknown"
        reasoning = Reasoning(result.thoughts, result.captured_blocks, provider, result.serving_provider,
                              result.thoughts_cut)
        await post_thought_log(self.bot, source, channel_id, reasoning, ctx.locale)


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(ChatCog(bot))
