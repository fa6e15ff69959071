"""Where a capability joins an answer: the seams, in the order `Answering` runs them.

A capability (`Capability`) is asked once per admitted answer whether it takes part
(`join`); its `AnswerPart` then fills the seams it needs, each a no-op by default:

| seam | when | for example |
|---|---|---|
| `wait` | before the answer takes its turn; False ends it | a listen channel's gap |
| `prepare` | the request is built: adds to it, may post notes | the pages a question links |
| `tools` | the answer's tool loop is made | the bot's `web_search` tool |
| `for_attempt` | each attempt (the turn runs it): shapes the request for the provider and model | native search |
| `after` | the answered attempt's text is done (the turn runs it): notes under the answer | the sources line |
| `books` | the answer is over: writes, queued for the batched writes | the answer's records, searches counted |

What every answer needs — admission and limits, the history, the request, the turn,
usage — stays in `bot.question` and `bot.turn`; `for_attempt` and `after` reach the
turn through `TurnContext.parts` (`bot.turn.seams`), which knows no capability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.load.answers import RunningAnswer
from bot.question.context import Question, Services
from bot.tools import ToolLoop
from bot.turn import TurnOutcome, TurnRoute
from bot.turn.seams import TurnEnding
from providers.model_capabilities import ModelCapabilities
from providers.types import ChatRequest
from stream.interrupt import Interrupt


@dataclass(frozen=True)
class Joining:
    """An admitted answer a capability may join: its question, the route that answers
    it, and the bot's parts."""

    question: Question
    route: TurnRoute
    services: Services


@dataclass(frozen=True)
class Ended:
    """An answer that is over: what its books need (`gone`: parts a regenerated answer no
    longer has)."""

    question: Question
    answer: RunningAnswer
    outcome: TurnOutcome
    gone: tuple[int, ...] = ()


class AnswerPart:
    """One capability's part in one answer; every seam does nothing unless overridden."""

    async def wait(self, interrupt: Interrupt) -> bool:
        return True

    async def prepare(self, request: ChatRequest) -> ChatRequest:
        return request

    def tools(self, loop: ToolLoop) -> ToolLoop:
        return loop

    async def for_attempt(self, request: ChatRequest, capabilities: ModelCapabilities, paid_by: str) -> ChatRequest:
        return request

    async def after(self, ending: TurnEnding) -> None:
        return None

    async def books(self, ended: Ended) -> None:
        return None


class Capability(Protocol):
    def join(self, joining: Joining) -> AnswerPart | None:
        """This capability's part in the answer, or None when it takes none."""
