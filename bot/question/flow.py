"""A question from the moment it arrives to its last bookkeeping, in one order:

1. **Arrive** (`question_of`): a message that addresses the bot becomes a `Question`,
   with the one configuration read every later step uses.
2. **Admit** (`admit`), before any side effect (no download, thread or typing yet):
   access and channel rules, the database policy, the route, the member's own answer
   still streaming here stops (a follow-up), the per-member cap, then the limits of
   whoever pays. The answer is registered the moment the cap admits it, so the cap,
   `/stop`, follow-ups and shutdown see it from then on.
3. **Wait** for a turn (`bot.load.turn_queue`), "typing…" shown once while waiting.
4. **Prepare**: the history, the request (files downloaded), the thread.
5. **Turn** (`bot.turn.run_generation_turn`), under one deadline for the whole answer.
6. **Bookkeeping**: the answer's parts recorded, the left-out note, the thought log,
   usage.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import discord

from bot.edge.sink import DiscordMessageSink
from bot.load.answers import RunningAnswer
from bot.load.bookkeeping import AnswerWrite
from bot.load.turn_queue import answer_in_turn
from bot.question.admission import REFUSAL_KEYS, RefusalThrottle, decide_question
from bot.question.context import Question, Services, arrive
from bot.question.conversation import addresses_bot, build_request, strip_bot_mention
from bot.question.history import History, Recall, conversation_history, say_left_out
from bot.question.thought_log import (
    Reasoning,
    configured_channel_id,
    post_error_detail,
    post_thought_log,
)
from bot.question.threads import AnswerPlace, ThreadOpener, in_thread_of_bot, threads_on
from bot.repo.conversation import DEFAULT_HISTORY_MESSAGES
from bot.repo.usage import Limits
from bot.tools import ToolContext, ToolLoop
from bot.turn import Credentials, TurnContext, TurnOutcome, TurnRoute, run_generation_turn
from bot.turn.context import answer_limits, endpoint_policy
from bot.turn.notices import blocked_key
from bot.usage.limits import LIMITED_LEG, LimitFacts, LimitReached, admit
from bot.usage.record import record_usage
from providers.i18n import t
from providers.types import ChatRequest
from stream.sink import SinkError

log = logging.getLogger(__name__)

NOT_SET_UP = ("no model is set up for server %s and no default route: set DEFAULT_TEXT_PROVIDER, "
              "DEFAULT_TEXT_MODEL and DEFAULT_TEXT_API_KEYS, or have a manager run /model set and /keys add")


@dataclass
class Admitted:
    """A question the checks let through: its registered answer, and whose credentials
    and route answer it."""

    answer: RunningAnswer
    credentials: Credentials
    route: TurnRoute
    # Counts a server-paid answer when the turn reaches the server's fallback (None: counted at admission).
    server_may_pay: Callable[[], Awaitable[bool]] | None = None


@dataclass
class Prepared:
    """What the turn needs that took work to get: where it streams, the history and the request."""

    place: AnswerPlace
    history: History
    request: ChatRequest


class Answering:
    """Every question of the bot, from arrival to bookkeeping (see the module docstring)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.throttle = RefusalThrottle()
        self.threads = ThreadOpener()
        self._told_not_set_up = False

    # ---- 1. arrive -----------------------------------------------------------------------
    async def question_of(self, message: discord.Message) -> Question | None:
        """The question `message` asks, or None when it does not address the bot (a
        member's message in a bot thread addresses it while the server has threads on)."""
        me = self.services.client.user
        if me is None or self.services.answers.closed:
            return None
        mentioned = addresses_bot(message, me)
        if not mentioned and not in_thread_of_bot(message, me.id):
            return None
        question = await arrive(message, strip_bot_mention(message.content, me.id), me.id, self.services.config)
        return question if mentioned or threads_on(question) else None

    async def handle(self, message: discord.Message) -> None:
        question = await self.question_of(message)
        if question is None:
            return
        admitted = await self.admit(question)
        if admitted is None:
            return
        try:
            await self._wait_and_answer(question, admitted)
        finally:
            self.services.answers.finish(admitted.answer)

    # ---- 2. admit ------------------------------------------------------------------------
    async def admit(self, question: Question) -> Admitted | None:
        """Every check, in order, before anything is shown or fetched; None: not answered
        (the member was told why where that is due)."""
        if not await self._access(question):
            return None
        credentials = self._credentials(question)
        if credentials is None:
            await question.reply("chat.database_busy" if question.config.state == "busy" else "chat.database_down")
            return None
        if not question.prompt and not question.message.attachments:
            await question.reply("chat.empty_prompt")
            return None
        route = credentials.route(question.config)
        if route.blocked is not None or not route.legs:
            await self._blocked(question, route.blocked or "no_route")
            return None
        answer = await self._register(question)
        if answer is None:
            return None
        return await self._within_limits(question, Admitted(answer, credentials, route))

    async def _access(self, question: Question) -> bool:
        decision = decide_question(question, self.services.settings.ALLOW_DMS)
        if decision.action == "refuse" and decision.reason is not None:
            where = question.where
            if decision.reason == "dms_off" or self.throttle.allows(where.guild_id, question.asker_id):
                await question.reply(REFUSAL_KEYS[decision.reason])
        return decision.action == "answer"

    def _credentials(self, question: Question) -> Credentials | None:
        """The database policy, in one place: a readable configuration answers as stored;
        when the database does not answer, the operator's default may answer
        (DATABASE_DOWN_USES_DEFAULT) only where the access rules are known — a DM, or a
        server whose settings this process kept — so a blocked member is never answered."""
        config, credentials = question.config, self.services.credentials
        if config.readable:
            return credentials
        rules_known = question.where.guild_id is None or config.server is not None
        return credentials.fallback if rules_known else None

    async def _blocked(self, question: Question, reason: str) -> None:
        if reason == "no_route" and not self._told_not_set_up:
            self._told_not_set_up = True  # the operator's line, once per process
            log.warning(NOT_SET_UP, question.where.guild_id)
        await question.reply(blocked_key(reason, question.where.guild_id is None))

    async def _register(self, question: Question) -> RunningAnswer | None:
        """The member's answer still streaming here stops (a follow-up); a member at the
        cap is told so; else the answer is registered (no await between the cap and the
        registration, so two questions at once cannot both pass)."""
        answers, where = self.services.answers, question.where
        mine = answers.latest_of(where.channel_id, question.asker_id)
        if mine is not None:
            answers.fire([mine], "follow_up")
        cap = self.services.settings.MAX_ANSWERS_PER_MEMBER
        if len(answers.of_member(question.asker_id)) >= cap:
            await question.reply("chat.member_busy", count=cap)
            return None
        answer = answers.start(RunningAnswer(where.channel_id, question.asker_id, question.message.id,
                                             where.guild_id, queued=True))
        if answer is None:  # shutdown began
            await question.reply("chat.bot_restarting")
        return answer

    async def _within_limits(self, question: Question, admitted: Admitted) -> Admitted | None:
        """The limits, where the server (or the operator) starts to pay: now when its leg
        comes first, else when the turn reaches its fallback behind the member's own key."""
        route = admitted.route
        if route.legs[0].credential_source != LIMITED_LEG:
            if any(leg.credential_source == LIMITED_LEG for leg in route.legs):
                admitted.server_may_pay = lambda: self._server_may_pay(question, route)
            return admitted
        if not await self._server_may_pay(question, route):
            self.services.answers.finish(admitted.answer)
            return None
        return admitted

    async def _server_may_pay(self, question: Question, route: TurnRoute) -> bool:
        """Count one server-paid answer; False (the member told, throttled) at a limit."""
        settings, server = self.services.settings, question.config.server
        facts = LimitFacts(question.where.guild_id, question.asker_id, server.limits if server else Limits(),
                           Limits(settings.DEFAULT_MESSAGES_PER_HOUR, settings.DEFAULT_TOKENS_PER_DAY))
        counted = await admit(self.services.sessions, facts, route.operator_default)
        if counted.hit is not None:
            await self._refuse_limit(question, counted.hit)
            return False
        return True

    async def _refuse_limit(self, question: Question, hit: LimitReached) -> None:
        """Which limit and when it resets, at most once an hour per member and limit."""
        if not self.throttle.allows(question.where.guild_id, question.asker_id, topic=hit.key):
            return
        stamp = int(hit.resets.timestamp())
        await question.reply(hit.key, limit=f"{hit.limit:,}", resets=f"<t:{stamp}:t> (<t:{stamp}:R>)")

    # ---- 3. wait ---------------------------------------------------------------------------
    async def _wait_and_answer(self, question: Question, admitted: Admitted) -> None:
        answer = admitted.answer

        async def typing_once() -> None:
            await question.message.channel.typing()  # awaited, discord.py sends one typing request

        ran = await answer_in_turn(self.services.turns, answer, typing_once,
                                   lambda: self._answer(question, admitted))
        if not ran and (answer.interrupt.reason == "shutdown" or self.services.answers.closed):
            await question.reply("chat.bot_restarting")

    async def _answer(self, question: Question, admitted: Admitted) -> None:
        """The turn was granted: prepare, answer (under the turn's one deadline), keep the books."""
        answer = admitted.answer
        prepared = await self._prepare(question, answer)
        if answer.interrupt.is_set():  # stopped while it was prepared: nothing was shown yet
            if answer.interrupt.reason == "shutdown":
                await question.reply("chat.bot_restarting")
            return
        ctx = self._turn_context(question, prepared, admitted)
        tools = ToolLoop(self.services.tools, ToolContext(question.message.channel, question.message.author))
        try:
            outcome = await run_generation_turn(ctx, prepared.request, admitted.credentials, tools, admitted.route)
        finally:
            ctx.sink.close()
        await self._keep_books(question, admitted, prepared, ctx, outcome)

    # ---- 4. prepare ----------------------------------------------------------------------
    async def _prepare(self, question: Question, answer: RunningAnswer) -> Prepared:
        services, server = self.services, question.config.server
        depth = server.history_messages if server is not None else DEFAULT_HISTORY_MESSAGES
        history = await conversation_history(question.message, question.bot_id, depth,
                                             Recall(services.answers, services.sessions))
        me = services.client.user
        request = await build_request(question, history, services.settings.MAX_OUTPUT_TOKENS,
                                      me.display_name if me is not None else "the bot")
        place = await self.threads.place(question)  # the channel, or a new thread on the question
        answer.channel_id = place.channel_id
        return Prepared(place, history, request)

    def _turn_context(self, question: Question, prepared: Prepared, admitted: Admitted) -> TurnContext:
        services, settings, place = self.services, self.services.settings, prepared.place
        answer, server_may_pay = admitted.answer, admitted.server_may_pay
        sink = DiscordMessageSink(place.channel, reply_to=place.reply_to, client=services.client, typing=True)
        answer.queued = False  # streaming from here on
        return TurnContext(user_id=question.asker_id, guild_id=question.where.guild_id,
                           channel_id=place.channel_id, locale=question.locale, sink=sink,
                           budget=services.budgets.for_channel(place.channel_id), interrupt=answer.interrupt,
                           limits=answer_limits(settings), max_messages=settings.MAX_MESSAGES_PER_ANSWER,
                           endpoint_policy=endpoint_policy(settings),
                           clients=services.clients, config=question.config, shown=answer.shown,
                           server_may_pay=server_may_pay)

    # ---- 6. bookkeeping ------------------------------------------------------------------
    async def _keep_books(self, question: Question, admitted: Admitted, prepared: Prepared, ctx: TurnContext,
                          outcome: TurnOutcome) -> None:
        """After the answer is on screen: what it is made of, the notes under it, its
        reasoning and its usage."""
        services, result = self.services, outcome.result
        record = admitted.answer.record()
        if services.writes is not None and services.sessions is not None and record.message_ids:
            services.writes.put(AnswerWrite(record))
        await say_left_out(prepared.history, ctx.sink, bool(record.message_ids), ctx.locale)
        if result is not None and result.status == "empty_response" and not outcome.error_shown:
            with contextlib.suppress(SinkError):
                await ctx.sink.send(t("chat.empty_response", ctx.locale), reply=True)
        await self._thought_log(question, ctx, outcome)
        if services.writes is not None and services.sessions is not None:
            server = question.config.server
            record_usage(services.writes, ctx, prepared.request, outcome, server.facts.route if server else None)

    async def _thought_log(self, question: Question, ctx: TurnContext, outcome: TurnOutcome) -> None:
        """Reasoning, and a custom endpoint's own error words, to the server's thought-log channel."""
        result, channel_id = outcome.result, configured_channel_id(question.config)
        if result is None or ctx.guild_id is None or channel_id is None:
            return
        client = self.services.client
        if outcome.private_detail:
            await post_error_detail(client, ctx.guild_id, channel_id, outcome.private_detail, ctx.locale)
        if result.thoughts or result.captured_blocks:
            provider = outcome.target.provider if outcome.target is not None else "unknown"
            reasoning = Reasoning(result.thoughts, result.captured_blocks, provider, result.serving_provider,
                                  result.thoughts_cut)
            await post_thought_log(client, question.message.channel, channel_id, reasoning, ctx.locale)
