"""A question from the moment it arrives to its last bookkeeping, in one order:

1. **Arrive** (`question_of`): a message that addresses the bot — or any member message
   in a listen channel — becomes a `Question`, with the one configuration read every
   later step uses.
2. **Admit** (`bot.question.admitting`), before any side effect: access, the database
   policy, the route, the member's own answer here, the cap, the limits; the answer is
   registered. Then the capabilities **join** it (`bot.question.seams`).
3. **Wait**: each capability's wait (a listen channel's gap), then a turn
   (`bot.load.turn_queue`), "typing…" shown once while waiting.
4. **Prepare** (`bot.question.preparation`): the history, the request with what the
   capabilities add, the thread, under one deadline; stopped the moment the answer is
   interrupted.
5. **Turn** (`bot.turn.run_generation_turn`), under one deadline for the whole answer;
   the capabilities shape each attempt and add their notes after it.
6. **Books** (`bot.question.books`): each capability's books, the left-out note, usage;
   the thought log once the turn is released.

**Back-to-back messages** (`bot.capabilities.listening.batching`): a member's message
that arrives before any text of their previous answer here is on screen, within the
server's batch seconds of their previous message (or while that answer waits for a
listen channel's gap), joins it: the previous answer is dropped unseen and one answer to
all the messages starts, replying to the newest. A single question waits for nothing;
the cost is the dropped request: a provider may already have read (and billed) its
input, and the combined request is sent in full again.

**Again.** Regenerate and Continue (`bot.capabilities.answer_controls.again`) run the
same steps for an earlier answer's question, in the answer's own messages
(`Question.again`).

**Commands.** A question asked by a slash command (`/catchup`,
`bot.capabilities.catchup`) runs the same steps with a `Delivery`
(`Question.delivery`): its asker is the command's member, its refusals are lines to
them alone (always said: a command waits for its answer), it continues no conversation,
never joins a batch, and streams into the delivery's sink.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

import discord

from bot.capabilities.answer_controls.buttons import AnswerControls
from bot.capabilities.listening.batching import joins_the_batch
from bot.edge.allowlist import serves
from bot.edge.sink import DiscordMessageSink
from bot.load.config_cache import ServerConfig
from bot.load.turn_queue import answer_in_turn
from bot.question.admitting import Admission, Admitted
from bot.question.books import Books
from bot.question.context import AnswerSink, Question, Services, arrive
from bot.question.conversation import ANSWERED_TYPES, addresses_bot, strip_bot_mention
from bot.question.history import ASIDE_PREFIX
from bot.question.preparation import Preparation, Prepared
from bot.question.seams import Capability, Ended, Joining
from bot.question.threads import in_thread_of_bot, threads_on
from bot.tools import ToolContext, ToolLoop
from bot.turn import TurnContext, TurnOutcome, run_generation_turn
from bot.turn.context import answer_limits
from stream.buffer import Resume
from stream.reuse import ReusingSink
from stream.sink import MessageSink


@dataclass(frozen=True)
class Answered:
    """An answer whose turn is over: what is posted after the turn is released."""

    ctx: TurnContext
    outcome: TurnOutcome


class Answering:
    """Every question of the bot, from arrival to bookkeeping (see the module docstring);
    `capabilities` join each admitted answer at their seams (`bot.question.seams`)."""

    def __init__(self, services: Services, capabilities: Sequence[Capability] = ()) -> None:
        self.services = services
        self.capabilities = tuple(capabilities)
        self.admission = Admission(services)
        self.preparation = Preparation(services)
        self.books = Books(services)

    async def handle(self, message: discord.Message) -> None:
        question = await self.question_of(message)
        if question is not None:
            await self.answer(question)

    async def answer(self, question: Question) -> None:
        """Admit, join, wait, answer and keep the books of one question (a new one or `again`)."""
        admitted = await self.admission.admit(question)
        if admitted is None:
            return
        try:
            joining = Joining(admitted.question, admitted.route, self.services)
            admitted.parts = tuple(part for c in self.capabilities if (part := c.join(joining)) is not None)
            await self._wait_and_answer(admitted.question, admitted)
        finally:
            self.services.answers.finish(admitted.answer)

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
        server = await self._server(message) if _for_listener(message) else None
        gap = server.listen_channels.get(message.channel.id) if server is not None else None
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
        will use them; None in a DM, in a server with no listen channel (no read for a
        message that may not be to the bot), or when they cannot be read (the question's
        read then says why, once)."""
        cache = self.services.config
        if cache is None or message.guild is None or not cache.may_listen(message.guild.id):
            return None
        try:
            return await cache.server(message.guild.id)
        except Exception:  # noqa: BLE001 - the question's own read applies the failure policy
            return None

    # ---- 3. wait, then the turn ------------------------------------------------------------
    async def _wait_and_answer(self, question: Question, admitted: Admitted) -> None:
        """The capabilities' waits, then the turn; the thought log is posted once the turn
        is released, so the next answer need not wait for it."""
        answer = admitted.answer
        answered: Answered | None = None

        async def typing_once() -> None:
            await question.message.channel.typing()  # awaited, discord.py sends one typing request

        async def in_turn() -> None:
            nonlocal answered
            answered = await self._answer(question, admitted)

        for part in admitted.parts:
            if not await part.wait(answer.interrupt):
                return  # joined by a newer message of the member, or stopped, while it waited
        ran = await answer_in_turn(self.services.turns, answer, typing_once, in_turn)
        if not ran and (answer.interrupt.reason == "shutdown" or self.services.answers.closed):
            await question.reply("chat.bot_restarting")
        if answered is not None:
            await self.books.thought_log(question, answered.ctx, answered.outcome)

    # ---- 4.-6. prepare, the turn, the books ------------------------------------------------
    async def _answer(self, question: Question, admitted: Admitted) -> Answered | None:
        """The turn was granted: prepare, answer (under the turn's one deadline), keep the
        books; the answer, for what comes after its turn (None: nothing was answered)."""
        answer = admitted.answer
        prepared = await self.preparation.prepare_answer(question, admitted)
        if prepared is None or answer.interrupt.is_set():  # nothing was shown yet
            if answer.interrupt.reason == "shutdown":
                await question.reply("chat.bot_restarting")
            return None
        on_screen = self._sink(question, prepared)
        again = question.again
        sink = ReusingSink(on_screen, again.parts) if again is not None and again.kind == "regenerate" else on_screen
        ctx = turn_context(question, prepared, admitted, sink, self.services)
        try:
            outcome = await run_generation_turn(ctx, prepared.request, admitted.credentials,
                                                self._tools(question, admitted), admitted.route)
        finally:
            on_screen.close()
        gone: tuple[int, ...] = ()
        if isinstance(sink, ReusingSink):  # the parts the new version did not need
            gone = tuple(part.id for part in sink.leftover())
            await sink.remove_leftover()
        await self.books.keep(Ended(question, answer, outcome, gone), admitted.parts, prepared, ctx)
        return Answered(ctx, outcome)

    def _sink(self, question: Question, prepared: Prepared) -> AnswerSink:
        """Where the answer streams: the command's delivery, else the place's channel,
        replying to the question, with the answer's buttons."""
        client = self.services.client
        if question.delivery is not None:
            return question.delivery.sink(client)
        return DiscordMessageSink(prepared.place.channel, reply_to=prepared.place.reply_to, client=client,
                                  typing=True,
                                  controls=AnswerControls(question.asker_id, question.message.id, question.locale))

    def _tools(self, question: Question, admitted: Admitted) -> ToolLoop:
        """The bot's tools, with what the capabilities add (web search's tool); they see
        the question's channel as far as the asker may."""
        command = question.delivery.interaction if question.delivery is not None else None
        tools = ToolLoop(self.services.tools, ToolContext(question.message.channel, question.asker, command))
        for part in admitted.parts:
            tools = part.tools(tools)
        return tools


def turn_context(question: Question, prepared: Prepared, admitted: Admitted, sink: MessageSink,
                 services: Services) -> TurnContext:
    """What the turn knows of the question; a Continue resumes the answer's last part,
    within the bound of messages an answer may have."""
    settings, place = services.settings, prepared.place
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


def _for_listener(message: discord.Message) -> bool:
    """A member's message a listen channel answers: not a bot's, not a system message,
    not a `//` aside."""
    return (not message.author.bot and message.type in ANSWERED_TYPES
            and not message.content.lstrip().startswith(ASIDE_PREFIX))
