"""A question from the moment it arrives to its last bookkeeping, in one order:

1. **Arrive** (`question_of`): a message that addresses the bot — or any member message
   in a listen channel — becomes a `Question`, with the one configuration read every
   later step uses.
2. **Admit** (`admit`), before any side effect (no download, thread or typing yet):
   access and channel rules, the database policy, the route, the member's own answer
   here (a batch grows, or a follow-up stops it), the per-member cap, then the limits of
   whoever pays. The answer is registered the moment the cap admits it, so the cap,
   `/stop`, the buttons, follow-ups and shutdown see it from then on.
3. **Wait**: a listen channel's gap between answers (`bot.capabilities.listening.gaps`), then a turn
   (`bot.load.turn_queue`), "typing…" shown once while waiting.
4. **Prepare**: the history, the request (files downloaded and read, links read), the
   thread, under one deadline (`prepare_seconds`: a file or link past it is left out
   with a note; past it and a grace the question ends with a note), and stopped the
   moment the answer is interrupted (`/stop`, a newer message, shutdown): an
   interrupted answer leaves the member's cap at once, so its work must end with it.
5. **Turn** (`bot.turn.run_generation_turn`), under one deadline for the whole answer.
6. **Bookkeeping**: the answer's parts recorded with what its buttons need, the left-out
   note, the thought log, usage.

**Back-to-back messages** (`bot.capabilities.listening.batching`): a member's message that arrives
before any text of their previous answer here is on screen, within the server's batch
seconds of their previous message (or while that answer waits for a listen channel's
gap), joins it: the previous answer is dropped unseen and one answer to all the messages
starts, replying to the newest. A single question waits for nothing; the cost is the
dropped request: a provider may already have read (and billed) its input, and the
combined request is sent in full again.

**Again.** Regenerate and Continue (`again`) run the same steps for an earlier answer's
question, in the answer's own messages (`Question.again`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

import discord

from bot.capabilities.answer_controls.buttons import AnswerControls
from bot.capabilities.listening.batching import after, joins_the_batch
from bot.edge.allowlist import serves
from bot.edge.sink import DiscordMessageSink
from bot.load.answers import RunningAnswer
from bot.load.config_cache import ServerConfig
from bot.load.turn_queue import answer_in_turn
from bot.question.admission import REFUSAL_KEYS, RefusalThrottle, decide_question
from bot.question.context import Question, Services, arrive
from bot.question.conversation import (
    ANSWERED_TYPES,
    addresses_bot,
    build_request,
    strip_bot_mention,
)
from bot.question.history import (
    ASIDE_PREFIX,
    History,
    Recall,
    conversation_history,
    listen_history,
    say_left_out,
)
from bot.question.seams import AnswerPart, Capability, Ended, Joining
from bot.question.thought_log import (
    Reasoning,
    configured_channel_id,
    post_error_detail,
    post_thought_log,
)
from bot.question.threads import AnswerPlace, ThreadOpener, in_thread_of_bot, threads_on
from bot.readers.pool import preparation_deadline
from bot.repo.conversation import DEFAULT_HISTORY_MESSAGES
from bot.settings import Settings
from bot.tools import ToolContext, ToolLoop
from bot.turn import Credentials, TurnContext, TurnOutcome, TurnRoute, run_generation_turn
from bot.turn.context import answer_limits
from bot.turn.notices import blocked_key
from bot.usage.limits import (
    LIMITED_LEG,
    LimitFacts,
    LimitReached,
    admit,
    operator_limits,
)
from bot.usage.record import record_usage
from providers.i18n import t
from providers.types import ChatRequest, Message
from stream.buffer import Resume
from stream.reuse import ReusingSink
from stream.sink import MessageSink, SinkError

log = logging.getLogger(__name__)

PREPARE_GRACE_SECONDS = 10.0  # past the preparation's deadline: notes, the thread, the request


def prepare_seconds(settings: Settings) -> float:
    """One question's preparation deadline: four documents' worth of reading (60 s by default)."""
    return 4 * settings.READER_SECONDS


NOT_SET_UP = ("no model is set up for server %s and no default route: set DEFAULT_TEXT_PROVIDER, "
              "DEFAULT_TEXT_MODEL and DEFAULT_TEXT_API_KEYS, or have a manager run /model set and /keys add")


@dataclass
class Admitted:
    """A question the checks let through: its registered answer, and whose credentials
    and route answer it."""

    question: Question  # the message's question, or the batch it joined
    answer: RunningAnswer
    credentials: Credentials
    route: TurnRoute
    # Counts a server-paid answer when the turn reaches the server's fallback (None: counted at admission).
    server_may_pay: Callable[[], Awaitable[bool]] | None = None
    paid_before: bool = False  # the batch's earlier answer was counted already
    parts: tuple[AnswerPart, ...] = ()  # the capabilities that joined the answer


@dataclass(frozen=True)
class Answered:
    """An answer whose turn is over: what is posted after the turn is released."""

    ctx: TurnContext
    outcome: TurnOutcome


@dataclass
class Prepared:
    """What the turn needs that took work to get: where it streams, the history and the request."""

    place: AnswerPlace
    history: History
    request: ChatRequest


class Answering:
    """Every question of the bot, from arrival to bookkeeping (see the module docstring);
    `capabilities` join each admitted answer at their seams (`bot.question.seams`)."""

    def __init__(self, services: Services, capabilities: Sequence[Capability] = ()) -> None:
        self.services = services
        self.capabilities = tuple(capabilities)
        self.throttle = RefusalThrottle()
        self.threads = ThreadOpener()
        self._told_not_set_up = False

    # ---- 1. arrive -----------------------------------------------------------------------
    async def question_of(self, message: discord.Message) -> Question | None:
        """The question `message` asks, or None when it does not address the bot (a
        member's message in a bot thread addresses it while the server has threads on)."""
        me = self.services.client.user
        if me is None or self.services.answers.closed or message.author.bot:
            return None  # a bot's message (the bot's own answers too) is never a question
        if not serves(self.services.settings.ALLOWED_SERVERS, message.guild.id if message.guild else None):
            return None  # a server the operator did not allow: the bot is leaving it
        prompt = strip_bot_mention(message.content, me.id)
        server = await self._server(message)
        gap = server.listen_channels.get(message.channel.id) if server is not None and _for_listener(message) else None
        if gap is not None:
            question = await arrive(message, prompt, me.id, self.services.config, server)
            return replace(question, listening=gap)
        mentioned = addresses_bot(message, me)
        joining = not mentioned and joins_the_batch(self.services.answers.latest_of(message.channel.id,
                                                                                    message.author.id),
                                                    asyncio.get_running_loop().time())
        if joining:  # the asker's quick follow-up: part of the question, mentioned or not
            return await arrive(message, prompt, me.id, self.services.config, server)
        if not mentioned and not in_thread_of_bot(message, me.id):
            return None
        question = await arrive(message, prompt, me.id, self.services.config, server)
        return question if mentioned or threads_on(question) else None

    async def _server(self, message: discord.Message) -> ServerConfig | None:
        """The server's settings (whether the channel listens), as the question's read
        will use them; None in a DM or when they cannot be read (the question's read then
        says why, once)."""
        cache = self.services.config
        if cache is None or message.guild is None:
            return None
        try:
            return await cache.server(message.guild.id)
        except Exception:  # noqa: BLE001 - the question's own read applies the failure policy
            return None

    async def handle(self, message: discord.Message) -> None:
        question = await self.question_of(message)
        if question is not None:
            await self.answer(question)

    async def answer(self, question: Question) -> None:
        """Admit, wait, answer and keep the books of one question (a new one or `again`)."""
        admitted = await self.admit(question)
        if admitted is None:
            return
        try:
            joining = Joining(admitted.question, admitted.route, self.services)
            admitted.parts = tuple(part for c in self.capabilities if (part := c.join(joining)) is not None)
            await self._wait_and_answer(admitted.question, admitted)
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
        registered = await self._register(question)
        if registered is None:
            return None
        question, answer, paid_before = registered
        return await self._within_limits(question, Admitted(question, answer, credentials, route,
                                                            paid_before=paid_before))

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

    async def _register(self, question: Question) -> tuple[Question, RunningAnswer, bool] | None:
        """The member's answer here joins this question (a batch) or stops (a follow-up);
        a member at the cap is told so; else the answer is registered (no await between the
        cap and the registration, so two questions at once cannot both pass). Returns the
        question (perhaps a batch), its answer and whether the batch was counted already."""
        answers, where = self.services.answers, question.where
        mine = answers.latest_of(where.channel_id, question.asker_id) if question.again is None else None
        paid_before = False
        if mine is not None:
            question, paid_before = after(mine, question, asyncio.get_running_loop().time())
            answers.fire([mine], "follow_up")
        cap = self.services.settings.MAX_ANSWERS_PER_MEMBER
        if len(answers.of_member(question.asker_id)) >= cap:
            await question.reply("chat.member_busy", count=cap)
            return None
        answer = answers.start(RunningAnswer(where.channel_id, question.asker_id, question.message.id,
                                             where.guild_id, queued=True, question=question,
                                             arrived=asyncio.get_running_loop().time(), paid=paid_before))
        if answer is None:  # shutdown began
            await question.reply("chat.bot_restarting")
            return None
        return question, answer, paid_before

    async def _within_limits(self, question: Question, admitted: Admitted) -> Admitted | None:
        """The limits, where the server (or the operator) starts to pay: now when its leg
        comes first, else when the turn reaches its fallback behind the member's own key."""
        route, answer = admitted.route, admitted.answer
        if admitted.paid_before:  # a batch: its first message was counted, the batch is one question
            return admitted
        if route.legs[0].credential_source != LIMITED_LEG:
            if any(leg.credential_source == LIMITED_LEG for leg in route.legs):
                admitted.server_may_pay = lambda: self._server_may_pay(question, route, answer)
            return admitted
        if not await self._server_may_pay(question, route, answer):
            self.services.answers.finish(answer)
            return None
        return admitted

    async def _server_may_pay(self, question: Question, route: TurnRoute, answer: RunningAnswer) -> bool:
        """Count one server-paid answer; False (the member told, throttled) at a limit."""
        settings = self.services.settings
        facts = LimitFacts(question.where.guild_id, question.asker_id, question.limits,
                           operator_limits(settings.DEFAULT_MESSAGES_PER_HOUR, settings.DEFAULT_TOKENS_PER_DAY))
        counted = await admit(self.services.sessions, facts, route.operator_default)
        if counted.hit is not None:
            await self._refuse_limit(question, counted.hit)
            return False
        answer.paid = True
        return True

    async def _refuse_limit(self, question: Question, hit: LimitReached) -> None:
        """Which limit and when it resets, at most once an hour per member and limit."""
        if not self.throttle.allows(question.where.guild_id, question.asker_id, topic=hit.key):
            return
        await question.reply(hit.key, **hit.shown())

    # ---- 3. wait ---------------------------------------------------------------------------
    async def _wait_and_answer(self, question: Question, admitted: Admitted) -> None:
        """The capabilities' waits (a listen channel's gap), then the turn; the thought
        log is posted once the turn is released, so the next answer need not wait for it."""
        answer = admitted.answer
        answered: list[Answered] = []

        async def typing_once() -> None:
            await question.message.channel.typing()  # awaited, discord.py sends one typing request

        async def in_turn() -> None:
            answered.extend(await self._answer(question, admitted))

        for part in admitted.parts:
            if not await part.wait(answer.interrupt):
                return  # joined by a newer message of the member, or stopped, while it waited
        ran = await answer_in_turn(self.services.turns, answer, typing_once, in_turn)
        if not ran and (answer.interrupt.reason == "shutdown" or self.services.answers.closed):
            await question.reply("chat.bot_restarting")
        for done in answered:
            await self._thought_log(question, done.ctx, done.outcome)

    async def _answer(self, question: Question, admitted: Admitted) -> tuple[Answered, ...]:
        """The turn was granted: prepare, answer (under the turn's one deadline), keep the
        books; the answer, for what comes after its turn (none: nothing was answered)."""
        answer = admitted.answer
        prepared = await self._prepared_unless_stopped(question, admitted)
        if prepared is None or answer.interrupt.is_set():  # nothing was shown yet
            if answer.interrupt.reason == "shutdown":
                await question.reply("chat.bot_restarting")
            return ()
        on_screen = DiscordMessageSink(prepared.place.channel, reply_to=prepared.place.reply_to,
                                       client=self.services.client, typing=True,
                                       controls=AnswerControls(question.asker_id, question.message.id, question.locale))
        again = question.again
        sink = ReusingSink(on_screen, again.parts) if again is not None and again.kind == "regenerate" else on_screen
        ctx = self._turn_context(question, prepared, admitted, sink)
        message = question.message
        tools = ToolLoop(self.services.tools, ToolContext(message.channel, message.author))
        for part in admitted.parts:
            tools = part.tools(tools)
        try:
            outcome = await run_generation_turn(ctx, prepared.request, admitted.credentials, tools, admitted.route)
        finally:
            on_screen.close()
        gone: tuple[int, ...] = ()
        if isinstance(sink, ReusingSink):  # the parts the new version did not need
            gone = tuple(part.id for part in sink.leftover())
            await sink.remove_leftover()
        await self._keep_books(Ended(question, answer, outcome, gone), admitted.parts, prepared, ctx)
        return (Answered(ctx, outcome),)

    # ---- 4. prepare ----------------------------------------------------------------------
    async def _prepared_unless_stopped(self, question: Question, admitted: Admitted) -> Prepared | None:
        """`_prepare`, ended the moment the answer is interrupted (None: the caller says why)
        or when it overruns its deadline and grace (None: the member is told here)."""
        seconds, answer = prepare_seconds(self.services.settings), admitted.answer
        preparing = asyncio.ensure_future(self._prepare(question, admitted, seconds))
        stopped = asyncio.ensure_future(answer.interrupt.wait())
        try:
            await asyncio.wait({preparing, stopped}, timeout=seconds + PREPARE_GRACE_SECONDS,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not preparing.done():
                preparing.cancel()  # its downloads end, a reader process on its file is killed
                with contextlib.suppress(asyncio.CancelledError):
                    await preparing
        if not preparing.cancelled():
            return preparing.result()
        if not answer.interrupt.is_set():
            log.warning("a question's preparation overran %.0f s and was given up", seconds + PREPARE_GRACE_SECONDS)
            await question.reply("chat.prepare_timeout", seconds=int(seconds))
        return None

    async def _prepare(self, question: Question, admitted: Admitted, seconds: float) -> Prepared:
        services = self.services
        history = await self._history(question, Recall(services.answers, services.sessions))
        me = services.client.user
        with preparation_deadline(seconds):  # every document and page of the question within it
            request = await build_request(question, history, services.settings.MAX_OUTPUT_TOKENS,
                                          me.display_name if me is not None else "the bot")
            for part in admitted.parts:
                request = await part.prepare(request)
        again = question.again
        if again is not None and again.kind == "continue":  # the answer so far, for the model to carry on
            request = replace(request, messages=[*request.messages,
                                                 Message("assistant", again.text, partial_answer=True)])
        place = await self._place(question)
        admitted.answer.channel_id = place.channel_id
        return Prepared(place, history, request)

    async def _history(self, question: Question, recall: Recall) -> History:
        """What the question continues (up to the batch's first message): a listen channel's
        recent messages, else its reply chain, DM or thread; plus the exchange it interrupted
        when that is not in it already."""
        server = question.config.server
        depth = server.history_messages if server is not None else DEFAULT_HISTORY_MESSAGES
        first = question.first_message
        if question.listening is not None:
            history = await listen_history(first, question.bot_id, depth)
        else:
            history = await conversation_history(first, question.bot_id, depth, recall)
        follows = question.follows
        if follows is not None and follows.answer and not any(m.id in follows.part_ids for m in history.sources):
            history.messages += [Message("user", follows.prompt, name=follows.name),
                                 Message("assistant", follows.answer)]
        return history

    async def _place(self, question: Question) -> AnswerPlace:
        """Where the answer streams: an earlier answer's own channel (again), the listen
        channel, or the question's channel or a new thread on it."""
        message, again = question.message, question.again
        if again is not None:
            channel_id = again.parts[0].channel_id or again.facts.channel_id
            return AnswerPlace(again.channel, channel_id, message if channel_id == message.channel.id else None)
        if question.listening is not None:
            return AnswerPlace(message.channel, message.channel.id, message)
        return await self.threads.place(question)  # the channel, or a new thread on the question

    def _turn_context(self, question: Question, prepared: Prepared, admitted: Admitted,
                      sink: MessageSink) -> TurnContext:
        services, settings, place = self.services, self.services.settings, prepared.place
        answer, again = admitted.answer, question.again
        resume, max_messages = None, settings.MAX_MESSAGES_PER_ANSWER
        if again is not None and again.kind == "continue":  # appended to the last part, within the bound
            answer.kept_parts = tuple(part.id for part in again.parts[:-1])
            resume = Resume(again.parts[-1], again.last_text)
            max_messages = max(1, max_messages - len(answer.kept_parts))
        answer.queued = False  # streaming from here on
        return TurnContext(user_id=question.asker_id, guild_id=question.where.guild_id,
                           channel_id=place.channel_id, locale=question.locale, sink=sink,
                           budget=services.budgets.for_channel(place.channel_id), interrupt=answer.interrupt,
                           limits=answer_limits(settings), max_messages=max_messages,
                           access=services.access, config=question.config, shown=answer.shown,
                           server_may_pay=admitted.server_may_pay, resume=resume, parts=admitted.parts)

    # ---- 6. bookkeeping ------------------------------------------------------------------
    async def _keep_books(self, ended: Ended, parts: Sequence[AnswerPart], prepared: Prepared,
                          ctx: TurnContext) -> None:
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

    async def _thought_log(self, question: Question, ctx: TurnContext, outcome: TurnOutcome) -> None:
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


def _for_listener(message: discord.Message) -> bool:
    """A member's message a listen channel answers: not a bot's, not a system message,
    not a `//` aside."""
    return (not message.author.bot and message.type in ANSWERED_TYPES
            and not message.content.lstrip().startswith(ASIDE_PREFIX))
