"""Admission: every check a question passes, in order, before anything is shown or
fetched (no download, thread or typing yet).

Access and channel rules (`bot.question.admission.decide_question`, refusals at most once
an hour per member and topic); the database policy (when the database does not answer,
the operator's default may answer only where the access rules are known); the route;
the member's own answer here (a batch grows, or a follow-up stops it); the per-member
cap; then the limits of whoever pays. The answer is registered the moment the cap admits
it, so the cap, `/stop`, the buttons, follow-ups and shutdown see it from then on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.capabilities.listening.batching import after
from bot.load.answers import RunningAnswer
from bot.question.admission import REFUSAL_KEYS, RefusalThrottle, decide_question
from bot.question.context import Question, Services
from bot.question.seams import AnswerPart
from bot.turn import Credentials, TurnRoute
from bot.turn.notices import blocked_key
from bot.usage.limits import LIMITED_LEG, LimitFacts, LimitReached, admit, operator_limits

log = logging.getLogger(__name__)

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


class Admission:
    """The checks of every question of one bot."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.throttle = RefusalThrottle()
        self._told_not_set_up = False

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
            asked = decision.reason == "dms_off" or question.delivery is not None  # a command is always answered
            if asked or self.throttle.allows(where.guild_id, question.asker_id):
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
        alone = question.again is not None or question.delivery is not None  # never a batch, nor a follow-up
        mine = answers.latest_of(where.channel_id, question.asker_id) if not alone else None
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
        """Which limit and when it resets, at most once an hour per member and limit (a
        command's asker every time: the line is theirs alone)."""
        throttled = question.delivery is None
        if throttled and not self.throttle.allows(question.where.guild_id, question.asker_id, topic=hit.key):
            return
        await question.reply(hit.key, **hit.shown())
