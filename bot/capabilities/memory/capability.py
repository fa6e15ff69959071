"""Memory's seams: recall in `prepare`, the `remember` tool in `tools`, the note line in
`after` (see the package docstring)."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from bot.capabilities.memory.asking import asks_to_remember
from bot.capabilities.memory.notes import memory_notes
from bot.capabilities.memory.recall import after_persona, recall_block
from bot.capabilities.memory.storage import NO_MEMORIES, MemberMemories
from bot.capabilities.memory.tool import AnswerMemory
from bot.load.config_cache import ConfigCache
from bot.question.context import Question, Services
from bot.question.seams import AnswerPart, Joining
from bot.tools import ToolLoop
from bot.turn.seams import TurnEnding
from providers.types import ChatRequest

log = logging.getLogger(__name__)


class Remembering:
    """Joins every answer of a bot with a database: the server's facts apply to every
    member, and the asker's memories (read from the cache) only while memory is on."""

    def join(self, joining: Joining) -> AnswerPart | None:
        services = joining.services
        if services.config is None or services.sessions is None:
            return None
        return MemoryPart(joining.question, services, services.config)


@dataclass
class MemoryPart(AnswerPart):
    question: Question
    services: Services
    cache: ConfigCache
    kept: MemberMemories = NO_MEMORIES
    memory: AnswerMemory | None = None  # the answer's saves, while memory is on
    unread: bool = False  # the database did not answer: whether memory is on is unknown

    async def prepare(self, request: ChatRequest) -> ChatRequest:
        """The server's facts and the asker's memories that apply here, after the persona."""
        question = self.question
        self.kept = await self._memories()
        server = question.config.server
        facts = server.memory_facts if server is not None else ()
        memories = [m.fact for m in self.kept.recalled_in(question.where.guild_id)] if self.kept.enabled else []
        block = recall_block(facts, memories)
        return request if block is None else dataclasses.replace(request, system=after_persona(request.system, block))

    def tools(self, loop: ToolLoop) -> ToolLoop:
        """`remember`, bound to this answer, only while the asker's memory is on."""
        sessions = self.services.sessions
        if not self.kept.enabled or sessions is None:
            return loop
        self.memory = AnswerMemory(self.question.asker_id, self.question.where.guild_id, sessions)
        return dataclasses.replace(loop, registry=loop.registry.adding(self.memory.tool()))

    async def after(self, ending: TurnEnding) -> None:
        pointer = not (self.kept.enabled or self.unread) and asks_to_remember(self.question.prompt)
        await memory_notes(ending, self.memory, pointer)

    async def _memories(self) -> MemberMemories:
        """The asker's memories from the cache (no read for a member without settings);
        when the database cannot be read, none (the answer goes on without them)."""
        if self.question.config.state in ("busy", "down"):  # the question's own read failed just now
            self.unread = True
            return NO_MEMORIES
        try:
            return await self.cache.memories(self.question.asker_id)
        except (SQLAlchemyError, OSError) as exc:
            log.error("the member's memories cannot be read (%s): answering without them", type(exc).__name__)
            self.unread = True
            return NO_MEMORIES
