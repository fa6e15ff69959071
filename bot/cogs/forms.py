"""The private forms (modals) of the configuration commands.

discord.py hands a modal's failures to the modal's own `on_error`, not to the cog's
error handler, so `ConfigModal` answers them the way the commands answer theirs.
"""

from __future__ import annotations

import logging

import discord

from bot.cogs.base import answer_failure, reply
from bot.edge.limits import (
    MODAL_TITLE_LIMIT,
    TEXT_INPUT_LABEL_LIMIT,
    TEXT_INPUT_PLACEHOLDER_LIMIT,
)
from bot.repo.keys import MAX_KEY_LENGTH
from providers.i18n import t

log = logging.getLogger(__name__)

MODAL_TIMEOUT = 600.0


class ConfigModal(discord.ui.Modal):
    """A form whose refusals (bad input, a lost permission) get their localized line."""

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
        self.stop()  # answered: the form is done, as after a successful submit
        if await answer_failure(interaction, error):
            return
        # Only the type: an exception's text could quote what was typed into the form.
        log.error("form %s failed with %s", type(self).__name__, type(error).__name__)
        await reply(interaction, "commands.error.internal")


class KeyModal(ConfigModal):
    """The one private field an API key is typed into (never a command option: options are
    echoed in the client's command preview); subclasses store `self.key.value` on submit."""

    def __init__(self, title: str, locale: discord.Locale) -> None:
        super().__init__(title=title[:MODAL_TITLE_LIMIT], timeout=MODAL_TIMEOUT)
        self.key: discord.ui.TextInput[KeyModal] = discord.ui.TextInput(
            label=t("commands.modal.key_label", locale)[:TEXT_INPUT_LABEL_LIMIT],
            placeholder=t("commands.modal.key_placeholder", locale)[:TEXT_INPUT_PLACEHOLDER_LIMIT],
            style=discord.TextStyle.short, required=True, max_length=MAX_KEY_LENGTH,
        )
        self.add_item(self.key)
