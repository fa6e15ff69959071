"""The `remember` tool, offered to an answer whose asker turned memory on, bound to that
answer (`AnswerMemory`: the asker, the server it is asked in, what it saved). A fact is
saved when the tool runs, so the member's next question recalls it; the answer's note
line says what was saved (`notes.py`), so nothing is kept silently."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.capabilities.memory.storage import MAX_MEMORIES, Saved, add_memory
from bot.db.models_memory import FACT_LENGTH
from bot.tools.registry import Tool, ToolContext

log = logging.getLogger(__name__)

REMEMBER_TOOL = "remember"
MAX_SAVES_PER_ANSWER = 5  # a model looping on the tool cannot fill the member's memory in one answer
REMEMBER_DESCRIPTION = (
    "Save one short fact about the person asking, so later answers to them can use it (they turned "
    f"memory on). Only what they want kept about themselves, at most {FACT_LENGTH} characters; "
    "never facts about other people, never passwords, keys or other secrets.")
SAVED = "Saved to the asker's memory; the answer will show them what was saved."
CUT = f" It was longer than {FACT_LENGTH} characters and was cut."
DROPPED = f" They already had {MAX_MEMORIES} memories: the oldest was dropped."
TOO_MANY = f"Not saved: at most {MAX_SAVES_PER_ANSWER} facts are saved in one answer."
UNAVAILABLE = "Not saved: memory is unavailable right now. Tell the asker it was not saved."


class RememberArgs(BaseModel):
    fact: str = Field(..., min_length=1, max_length=4 * FACT_LENGTH,
                      description=f"The fact about the asker, in their words or a faithful summary "
                                  f"(at most {FACT_LENGTH} characters).")


@dataclass
class AnswerMemory:
    """One answer's saves: who asked, where (None: a DM), and what was saved so far."""

    user_id: int
    guild_id: int | None
    sessions: async_sessionmaker[AsyncSession]
    saved: list[Saved] = field(default_factory=list)
    failed: bool = False

    async def remember(self, args: RememberArgs, _context: ToolContext) -> str:
        """Save now (committed before the answer goes on); what the model is told."""
        if len(self.saved) >= MAX_SAVES_PER_ANSWER:
            return TOO_MANY
        try:
            async with self.sessions() as session, session.begin():
                saved = await add_memory(session, self.user_id, self.guild_id, args.fact)
        except (SQLAlchemyError, OSError) as exc:
            log.error("a memory could not be saved (%s)", type(exc).__name__)
            self.failed = True
            return UNAVAILABLE
        self.saved.append(saved)
        return SAVED + (CUT if saved.cut else "") + (DROPPED if saved.dropped else "")

    def tool(self) -> Tool:
        return Tool(REMEMBER_TOOL, REMEMBER_DESCRIPTION, RememberArgs, self.remember)
