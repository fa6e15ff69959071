"""The buttons under an answer: Stop while it streams; Regenerate, Continue and Reasoning after.

A press is an interaction (`bot.capabilities.answer_controls.buttons` registers one dynamic button at start-up,
so presses work after a restart); its reply costs no slot of Discord's global limit.
Every refusal is an ephemeral, localized line to the presser only:

- **Stop**: the asker, or a member who may manage messages in the channel. The answer's
  interrupt fires; the answer keeps its text with the stopped note and the button goes
  with the final edit.
- **Regenerate** and **Continue**: the asker only, within 24 hours and while no newer
  answer continued this one (`bot.capabilities.answer_controls.again`); the press is acknowledged at once and
  the answer is done again through the same flow as a new question (access, limits, the
  per-member cap).
- **Reasoning**: whoever can read the channel (they see the answer, and reasoning only
  says what the answer was made from): the captured reasoning, as a file when long.
- **Sources**: whoever can read the channel: every web page the answer was grounded on,
  when there were more than its sources line shows.
"""

from __future__ import annotations

import io
import logging

import discord
from discord.ext import commands

from bot.capabilities.answer_controls.again import (
    Found,
    Unchangeable,
    check_changeable,
    find_answer,
    question_again,
)
from bot.capabilities.answer_controls.buttons import Press
from bot.cogs.base import clip, reply
from bot.edge.limits import MESSAGE_LIMIT
from bot.question.flow import Answering
from providers.types import Source

log = logging.getLogger(__name__)

REASONING_FILE = "reasoning.txt"


class ControlsCog(commands.Cog):
    """Acts on the presses of the answer buttons (see the module docstring)."""

    def __init__(self, answering: Answering) -> None:
        self.answering = answering
        self.services = answering.services

    @commands.Cog.listener()
    async def on_answer_control(self, interaction: discord.Interaction, press: Press) -> None:
        try:
            if press.action == "stop":
                await self._stop(interaction, press)
            elif press.action == "why":
                await self._reasoning(interaction, press)
            elif press.action == "src":
                await self._sources(interaction, press)
            else:
                await self._again(interaction, press)
        except Exception:  # noqa: BLE001 - one failed press must not silence the listener
            log.exception("a %s press failed", press.action)

    async def _stop(self, interaction: discord.Interaction, press: Press) -> None:
        if interaction.user.id != press.asker_id and not interaction.permissions.manage_messages:
            await reply(interaction, "chat.controls.only_asker_stop")
            return
        answer = self.services.answers.by_question(press.question_id)
        if answer is None or not self.services.answers.fire([answer], "stop"):
            await reply(interaction, "chat.controls.finished")
            return
        await interaction.response.defer()  # the button goes with the answer's final edit

    async def _again(self, interaction: discord.Interaction, press: Press) -> None:
        if interaction.user.id != press.asker_id:
            await reply(interaction, "chat.controls.only_asker")
            return
        pressed = interaction.message
        found = await self._found(interaction, press)
        if pressed is None or found is None:
            await reply(interaction, "chat.controls.unknown")
            return
        try:
            await check_changeable(self.services, found)
            if press.action == "cont" and found.facts.finish_reason != "length":
                raise Unchangeable("chat.controls.not_cut")
        except Unchangeable as refusal:
            await reply(interaction, refusal.key)
            return
        await interaction.response.defer()  # acknowledged; the answer itself shows the rest
        question = await question_again(self.services, pressed, found,
                                        "continue" if press.action == "cont" else "regenerate")
        if question is None:
            await reply(interaction, "chat.controls.question_gone")
            return
        await self.answering.answer(question)

    async def _found(self, interaction: discord.Interaction, press: Press) -> Found | None:
        pressed = interaction.message
        if pressed is None:
            return None
        return await find_answer(self.services, pressed.id, press.asker_id, interaction.guild_id)

    async def _reasoning(self, interaction: discord.Interaction, press: Press) -> None:
        found = await self._found(interaction, press)
        reasoning = found.facts.reasoning if found is not None else None
        if not reasoning:
            await reply(interaction, "chat.controls.no_reasoning")
            return
        if len(reasoning) <= MESSAGE_LIMIT:
            await interaction.response.send_message(reasoning, ephemeral=True,
                                                    allowed_mentions=discord.AllowedMentions.none())
            return
        data = io.BytesIO(reasoning.encode("utf-8"))
        await interaction.response.send_message(ephemeral=True, file=discord.File(data, filename=REASONING_FILE))

    async def _sources(self, interaction: discord.Interaction, press: Press) -> None:
        found = await self._found(interaction, press)
        sources = found.facts.sources if found is not None else ()
        if not sources:
            await reply(interaction, "chat.controls.no_sources")
            return
        await interaction.response.send_message(clip(sources_list(sources)), ephemeral=True,
                                                allowed_mentions=discord.AllowedMentions.none(),
                                                suppress_embeds=True)


def sources_list(sources: tuple[Source, ...]) -> str:
    """Every source of an answer, one per line: its title (markdown escaped) and address."""
    lines = []
    for number, source in enumerate(sources, 1):
        title = discord.utils.escape_markdown(" ".join((source.title or "").split()))[:100]
        lines.append(f"{number}. {title} <{source.url}>" if title else f"{number}. <{source.url}>")
    return "\n".join(lines)
