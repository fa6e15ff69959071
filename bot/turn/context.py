"""What one turn knows about its question: who asked, where, in which language, how
its answer is shown and how it may be interrupted."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.errors.presentation import Audience
from bot.load.answers import Shown
from bot.load.config_cache import ConfigSnapshot
from bot.settings import Settings
from bot.turn.access import ProviderAccess
from bot.turn.seams import TurnSeams
from stream.buffer import MAX_MESSAGES, Resume
from stream.interrupt import Interrupt
from stream.limits import StreamLimits
from stream.pacing import EditBudget
from stream.sink import MessageSink
from stream.splitter import DISCORD_MESSAGE_LIMIT


@dataclass(slots=True)
class TurnContext:
    """Travels unchanged from the chat cog through every attempt of the turn.

    `sink` is where the answer goes (it also shows "typing…"); `budget` paces the
    channel's edits and is shared by every answer in that channel; `interrupt` ends the
    answer on `/stop`, a newer question or shutdown; `limits` and `max_messages` bound
    one answer's time, calls, kept reasoning and Discord messages; `access` is how the
    bot reaches providers (which addresses a custom endpoint may reach, what the operator
    said custom endpoints take, the provider HTTP clients every attempt shares: see
    `bot.turn.access`); `config` is the question's one configuration read
    (key pools come from it); `shown` is the delivery on screen now; `server_may_pay` counts the answer in
    the server's limits when the turn reaches the server's keys behind the member's own
    (False: a limit refused, the member was told; None: counted at admission already);
    `resume` (Continue) is the earlier answer's last part, which the new text extends;
    `parts` are the capabilities that joined the answer (`bot.turn.seams`: each shapes
    every attempt's request and adds its notes after the answer);
    `audience` who reads a failure's advice (a channel, or the operator at `bot ask`).
    """

    user_id: int
    guild_id: int | None
    channel_id: int
    locale: str | None
    sink: MessageSink
    budget: EditBudget | None = None
    interrupt: Interrupt = field(default_factory=Interrupt)
    limits: StreamLimits = field(default_factory=StreamLimits)
    max_messages: int = MAX_MESSAGES
    message_limit: int = DISCORD_MESSAGE_LIMIT  # characters one message holds before the answer splits
    access: ProviderAccess = field(default_factory=ProviderAccess)
    config: ConfigSnapshot = field(default_factory=lambda: ConfigSnapshot("none"))
    shown: Shown = field(default_factory=Shown)
    server_may_pay: Callable[[], Awaitable[bool]] | None = None
    resume: Resume | None = None  # Continue: the answer's last part, its text carried on
    parts: tuple[TurnSeams, ...] = ()
    audience: Audience = "discord"


def answer_limits(settings: Settings) -> StreamLimits:
    """The operator's bounds of one answer, for every place that runs a turn."""
    return StreamLimits(first_content_seconds=settings.FIRST_TOKEN_DEADLINE_SECONDS,
                        idle_seconds=settings.ANSWER_IDLE_SECONDS, total_seconds=settings.ANSWER_DEADLINE_SECONDS,
                        max_calls=settings.MAX_TOOL_CALLS_PER_RESPONSE, max_thought_chars=settings.MAX_REASONING_CHARS)
