"""Where a capability joins the turn: each attempt's request, and the answer's end.

The turn runs these for every capability that joined the answer
(`TurnContext.parts`, made from `bot.question.seams.AnswerPart`s), knowing nothing of
which capabilities they are: a fallback to another family asks `for_attempt` again,
and `after` runs once, when the answered attempt's text is done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from providers.model_capabilities import ModelCapabilities
from providers.types import ChatRequest
from stream.buffer import MessageDelivery
from stream.orchestrator import StreamResult


@dataclass(frozen=True)
class TurnEnding:
    """The answered attempt's text is done: what notes under it need."""

    locale: str | None
    delivery: MessageDelivery
    result: StreamResult  # a capability may add to it (sources, searches, usage)


class TurnSeams(Protocol):
    async def for_attempt(self, request: ChatRequest, capabilities: ModelCapabilities, paid_by: str) -> ChatRequest:
        """The attempt's request, shaped for its provider and model (`paid_by`: whose
        credentials the attempt uses)."""

    async def after(self, ending: TurnEnding) -> None:
        """Notes and extras under the answer."""
