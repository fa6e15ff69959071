"""The Erase / Cancel buttons under `/privacy erase`'s ephemeral question.

A plain discord.py view kept in this process for `CONFIRM_SECONDS`: the question is
ephemeral and short-lived, so it need not survive a restart (after one, its buttons
answer nothing and the member runs the command again). Only the member who asked may
press (the message is theirs alone, but a press is checked anyway); when time runs out
the buttons go and nothing is erased.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.cogs.base import reply, text
from providers.i18n import t

log = logging.getLogger(__name__)

CONFIRM_SECONDS = 60.0
Erase = Callable[[discord.Interaction], Awaitable[str]]  # erases, returns the reply to show


class ConfirmErase(discord.ui.View):
    """Erase runs `erase` once; Cancel and the timeout erase nothing."""

    def __init__(self, owner_id: int, locale: discord.Locale, erase: Erase,
                 seconds: float = CONFIRM_SECONDS) -> None:
        super().__init__(timeout=seconds)
        self.owner_id = owner_id
        self.locale = locale
        self.erase = erase
        self.asked: discord.Interaction | None = None  # the command's interaction, to take the buttons away
        self.add_item(_button(self, "commands.privacy.button_erase", discord.ButtonStyle.danger, self._erase))
        self.add_item(_button(self, "commands.privacy.button_cancel", discord.ButtonStyle.secondary, self._cancel))

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.user.id == self.owner_id:
            return True
        await reply(interaction, "commands.error.privacy_not_yours")
        return False

    async def _erase(self, interaction: discord.Interaction) -> None:
        self.stop()  # one press erases; the buttons answer nothing more
        await interaction.response.defer()
        said = await self.erase(interaction)
        await interaction.edit_original_response(content=said, view=None)

    async def _cancel(self, interaction: discord.Interaction) -> None:
        self.stop()
        await interaction.response.edit_message(content=text(interaction, "commands.reply.privacy_erase_cancelled"),
                                                view=None)

    async def on_timeout(self) -> None:
        if self.asked is None:
            return
        try:
            await self.asked.edit_original_response(
                content=text(self.asked, "commands.reply.privacy_erase_expired"), view=None)
        except discord.HTTPException as exc:  # dismissed by the member, or the token expired
            log.info("erase question not updated after its timeout (%s)", type(exc).__name__)

    async def on_error(self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any], /) -> None:
        log.error("privacy erase press failed with %s", type(error).__name__, exc_info=error)
        content = text(interaction, "commands.error.internal")
        try:
            if interaction.response.is_done():
                await interaction.edit_original_response(content=content, view=None)
            else:
                await interaction.response.edit_message(content=content, view=None)
        except discord.HTTPException:
            log.info("privacy erase failure not shown: the interaction is gone")


def _button(view: ConfirmErase, key: str, style: discord.ButtonStyle,
            pressed: Callable[[discord.Interaction], Awaitable[None]]) -> discord.ui.Button[ConfirmErase]:
    """A button labelled in the asker's language that runs `pressed`."""
    button: discord.ui.Button[ConfirmErase] = discord.ui.Button(label=t(key, view.locale), style=style)
    button.callback = pressed  # type: ignore[method-assign] - discord.py calls it with the interaction
    return button
