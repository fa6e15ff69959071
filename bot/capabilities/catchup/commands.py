"""`/catchup [messages] [public]`: the channel's recent messages summarized for the caller.

The command is a question like a mention, through the same flow (`Answering.answer`:
access, the database policy, the route and its keys and fallbacks, the per-member cap,
the limits and usage, the turn and its streaming), as Regenerate and Continue are; only
where it is answered differs (`CatchUpDelivery`). Before the flow it checks what only a
catch-up needs, each refusal one ephemeral line: the channel's access rules (a channel
the bot ignores says so, instead of the silence a message gets), that the caller may read
the channel's history themselves (the bot never lends its own), that they may post here
for a public summary, and that there is something to read.

DMs are allowed where the bot answers DMs (ALLOW_DMS): the history there is the caller's
own conversation with the bot. Spamming it is bounded as every question is: the per-member
cap on answers at once and the server's limits (each catch-up is one message take and its
tokens), refused with the same lines.
"""

from __future__ import annotations

import contextlib
import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.capabilities.catchup.delivery import CatchUpDelivery
from bot.capabilities.catchup.reading import DEFAULT_MESSAGES, MAX_MESSAGES, Unreadable, recent
from bot.cogs.base import text
from bot.edge.translator import localized
from bot.load.config_cache import read_config
from bot.question.admission import REFUSAL_KEYS, decide_question
from bot.question.context import Question, where_of
from bot.question.flow import Answering
from bot.tools.builtin import asker_may_read_history
from bot.tools.registry import ToolContext
from stream.sink import SentMessage

log = logging.getLogger(__name__)

PROMPT = "Catch me up on this channel's recent messages."  # the question's text (the transcript replaces its turn)


class CatchUpCog(commands.Cog):
    """/catchup (see the module docstring)."""

    def __init__(self, answering: Answering) -> None:
        self.answering = answering
        self.services = answering.services

    @localized(app_commands.command, "commands.catchup",
               params={"messages": "catchup_messages", "public": "catchup_public"})
    async def catchup(self, interaction: discord.Interaction,
                      messages: app_commands.Range[int, 1, MAX_MESSAGES] = DEFAULT_MESSAGES,
                      public: bool = False) -> None:
        """Summarize the channel's last `messages` messages; `public` posts it in the channel."""
        callback = await interaction.response.defer(ephemeral=True, thinking=True)  # always private: "thinking…"
        delivery: CatchUpDelivery | None = None
        try:
            delivery = await self._delivery(interaction, public, callback)
            question = await self._question(interaction, delivery)
            if question is not None and await self._readable(question, messages):
                await self.answering.answer(question)
                await self._ended(delivery)
        except Exception:  # noqa: BLE001 - one failed catch-up must not raise to the member
            log.exception("a catch-up failed")
            if delivery is None or not delivery.told:
                with contextlib.suppress(discord.HTTPException):
                    await interaction.edit_original_response(content=text(interaction, "commands.catchup.failed"))

    async def _delivery(self, interaction: discord.Interaction, public: bool,
                        callback: discord.InteractionCallbackResponse | None) -> CatchUpDelivery:
        """The deferred response as the answer's first place (Discord's callback names it;
        read back when it did not)."""
        response = callback.resource if callback is not None else None
        if not isinstance(response, discord.InteractionMessage):
            response = await interaction.original_response()
        return CatchUpDelivery(interaction, SentMessage(response.id, response.channel.id), [], public,
                               response=response)

    async def _question(self, interaction: discord.Interaction, delivery: CatchUpDelivery) -> Question | None:
        """The catch-up as a question, when the channel's rules and the caller's rights allow it."""
        me, response = self.services.client.user, delivery.response
        if me is None or response is None:
            return None
        where = where_of(response)
        config = await read_config(self.services.config, where.guild_id, interaction.user.id)
        question = Question(response, where, interaction.locale.value, PROMPT, me.id, config, delivery=delivery)
        decision = decide_question(question, self.services.settings.ALLOW_DMS)
        refusal = None
        if decision.action != "answer":
            refusal = REFUSAL_KEYS[decision.reason] if decision.reason is not None else "commands.catchup.not_here"
        elif not asker_may_read_history(ToolContext(delivery.channel, interaction.user)):
            refusal = "commands.catchup.no_history"
        elif delivery.public and not _may_post(delivery.channel, interaction.user):
            refusal = "commands.catchup.not_public"
        if refusal is not None:
            await question.reply(refusal)
            return None
        return question

    async def _readable(self, question: Question, count: int) -> bool:
        """The channel's messages read into the delivery; False (the caller told) when
        Discord refuses the bot the history or there is nothing to summarize."""
        delivery = question.delivery
        assert isinstance(delivery, CatchUpDelivery)
        try:
            delivery.read = await recent(delivery.channel, count, question.bot_id)
        except (Unreadable, discord.HTTPException):
            await question.reply("commands.catchup.unreadable")
            return False
        if not delivery.read:
            await question.reply("commands.catchup.nothing")
            return False
        return True

    async def _ended(self, delivery: CatchUpDelivery) -> None:
        """A public summary leaves no "thinking…" behind; an answer that never started
        (stopped, a restart) says so instead of thinking forever."""
        if delivery.told:
            return
        if not delivery.sinks:
            await delivery.tell(text(delivery.interaction, "commands.catchup.not_answered"))
        elif delivery.public:
            try:
                await delivery.interaction.delete_original_response()
            except discord.HTTPException:
                pass  # an expired token leaves the line: harmless


def _may_post(channel: discord.abc.Messageable, asker: discord.abc.User) -> bool:
    """The caller may post here themselves (always in a DM): a public summary speaks for them."""
    if getattr(channel, "guild", None) is None:
        return True
    if not isinstance(asker, discord.Member) or not hasattr(channel, "permissions_for"):
        return False
    allowed = channel.permissions_for(asker)
    sends = allowed.send_messages_in_threads if isinstance(channel, discord.Thread) else allowed.send_messages
    return allowed.view_channel and sends
