"""Bookkeeping: what an answer leaves behind once it is on screen — each capability's
books (its records, searches counted), the history's left-out note, the empty answer's
note, usage (queued for the batched writes, never on the answer's path) and, after the
answer's turn is released, its reasoning in the server's thought-log channel."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from bot.question.context import Question, Services
from bot.question.history import say_left_out
from bot.question.preparation import Prepared
from bot.question.seams import AnswerPart, Ended
from bot.question.thought_log import (
    Reasoning,
    configured_channel_id,
    post_error_detail,
    post_thought_log,
)
from bot.turn import TurnContext, TurnOutcome
from bot.usage.record import record_usage
from providers.i18n import t
from stream.sink import SinkError


class Books:
    """The books of every answer of one bot."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def keep(self, ended: Ended, parts: Sequence[AnswerPart], prepared: Prepared, ctx: TurnContext) -> None:
        """After the answer is on screen: each capability's books (what the answer is made
        of, what its buttons need, searches), the notes under it and its usage."""
        services, outcome = self.services, ended.outcome
        for part in parts:
            await part.books(ended)
        shown = bool(ended.answer.record().message_ids)
        await say_left_out(prepared.history, ctx.sink, shown, ctx.locale)
        result = outcome.result
        if result is not None and result.status == "empty_response" and not outcome.error_shown:
            with contextlib.suppress(SinkError):
                await ctx.sink.send(t("chat.empty_response", ctx.locale), reply=True)
        if services.writes is not None and services.sessions is not None:
            server = ended.question.config.server
            record_usage(services.writes, ctx, prepared.request, outcome, server.facts.route if server else None)

    async def thought_log(self, question: Question, ctx: TurnContext, outcome: TurnOutcome) -> None:
        """Reasoning, and a custom endpoint's own error words, to the server's thought-log channel."""
        result, channel_id = outcome.result, configured_channel_id(question.config)
        if result is None or ctx.guild_id is None or channel_id is None:
            return
        client = self.services.client
        if outcome.private_detail:
            await post_error_detail(client, ctx.guild_id, channel_id, outcome.private_detail, ctx.locale)
        if result.thoughts or result.captured_blocks or result.searches:
            provider = outcome.target.provider if outcome.target is not None else "unknown"
            reasoning = Reasoning(result.thoughts, result.captured_blocks, provider, result.serving_provider,
                                  result.thoughts_cut, result.searches)
            await post_thought_log(client, question.message.channel, channel_id, reasoning, ctx.locale)
