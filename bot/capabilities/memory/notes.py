"""The note line under an answer that saved a memory ("remembered: …", with a word when
it was cut or the oldest was dropped), or that was asked to remember while the asker's
memory is off (a pointer to `/memory on`): nothing is kept, or left unkept, silently."""

from __future__ import annotations

import discord

from bot.capabilities.memory.recall import one_line
from bot.capabilities.memory.storage import MAX_MEMORIES
from bot.capabilities.memory.tool import AnswerMemory
from bot.db.models_memory import FACT_LENGTH
from bot.turn.seams import TurnEnding
from providers.i18n import t

SHOWN = 80  # characters of a saved fact the note shows


def shortened(fact: str) -> str:
    """The fact on one line, at most SHOWN characters, unable to mention or format."""
    line = one_line(fact)
    line = line if len(line) <= SHOWN else line[: SHOWN - 1] + "…"
    return discord.utils.escape_markdown(discord.utils.escape_mentions(line))


def memory_lines(memory: AnswerMemory | None, pointer: bool, locale: str | None) -> list[str]:
    """The note's lines: one per fact saved in this answer, the drop, a failure, the pointer."""
    if memory is None:
        return [t("chat.memory.pointer", locale)] if pointer else []
    lines = [t("chat.memory.remembered_cut" if saved.cut else "chat.memory.remembered", locale,
               fact=shortened(saved.fact), limit=FACT_LENGTH) for saved in memory.saved]
    if any(saved.dropped for saved in memory.saved):
        lines.append(t("chat.memory.oldest_dropped", locale, limit=MAX_MEMORIES))
    if memory.failed:
        lines.append(t("chat.memory.not_saved", locale))
    return lines


async def memory_notes(ending: TurnEnding, memory: AnswerMemory | None, pointer: bool) -> None:
    lines = memory_lines(memory, pointer, ending.locale)
    if lines and ending.delivery.messages:
        await ending.delivery.add_note("\n".join(f"-# {line}" for line in lines))
