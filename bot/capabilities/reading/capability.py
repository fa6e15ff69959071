"""Reading's seam: the links a question names, read and added to its turn."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bot.capabilities.reading.linked import linked_content, post_link_notes
from bot.capabilities.reading.links import LinkPolicy
from bot.question.context import Question
from bot.question.seams import AnswerPart, Joining
from providers.types import ChatRequest, content_parts


class LinkReading:
    """Joins a question with text, unless the operator (READ_LINKS) or the server
    (`/settings read-links`) turned link reading off."""

    def join(self, joining: Joining) -> AnswerPart | None:
        question, settings = joining.question, joining.services.settings
        server = question.config.server
        if not question.prompt or not settings.READ_LINKS or (server is not None and not server.read_links):
            return None
        return LinksPart(question, LinkPolicy(allow_private=settings.LINKS_ALLOW_PRIVATE))


@dataclass
class LinksPart(AnswerPart):
    question: Question
    policy: LinkPolicy

    async def prepare(self, request: ChatRequest) -> ChatRequest:
        """The pages the question links follow its text in its turn (the request's last
        message); the member reads a note naming those that could not be read."""
        question = self.question
        linked = await linked_content(question.prompt, self.policy, question.locale)
        await post_link_notes(question.message, linked.notes)
        if not linked.parts:
            return request
        *before, turn = request.messages
        turn = dataclasses.replace(turn, content=[*content_parts(turn.content), *linked.parts])
        return dataclasses.replace(request, messages=[*before, turn])
