"""Catch-up's seams: the transcript in the request, the cited links under the answer."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bot.capabilities.catchup.delivery import CatchUpDelivery
from bot.capabilities.catchup.transcript import Transcript, cited_links, framed, transcript
from bot.question.seams import AnswerPart, Joining
from bot.turn.seams import TurnEnding
from providers.i18n import t
from providers.types import ChatRequest

NOTE = "-# "


class CatchUp:
    """Joins the answers `/catchup` asks for (their question's delivery is a catch-up)."""

    def join(self, joining: Joining) -> AnswerPart | None:
        delivery = joining.question.delivery
        return CatchUpPart(delivery, joining.question.locale) if isinstance(delivery, CatchUpDelivery) else None


@dataclass
class CatchUpPart(AnswerPart):
    delivery: CatchUpDelivery
    locale: str | None
    read: Transcript | None = None

    async def prepare(self, request: ChatRequest) -> ChatRequest:
        """The command's turn becomes the channel's messages, framed as data, with what to
        do with them (read by the command before the answer was admitted)."""
        self.read = transcript(self.delivery.read)
        *before, turn = request.messages
        turn = dataclasses.replace(turn, content=framed(self.read, len(self.delivery.read), self.locale))
        return dataclasses.replace(request, messages=[*before, turn])

    async def after(self, ending: TurnEnding) -> None:
        """Under the answer: the links of the messages it cited (only messages read), and
        how many older messages did not fit."""
        read, delivery, locale = self.read, ending.delivery, ending.locale
        if read is None or not delivery.messages:
            return
        links = cited_links(delivery.full_text, read.links)
        if links:
            shown = " ".join(f"[{number}](<{link}>)" for number, link in links)
            await delivery.add_note(NOTE + t("chat.catchup.cited", locale, links=shown))
        if read.left_out:
            await delivery.add_note(NOTE + t("chat.catchup.cut", locale, count=read.left_out))
