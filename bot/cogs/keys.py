"""`/keys add|list|remove`: the server's key rotation pool (Manage Server).

Keys are typed into a modal, never into a visible message or a command option (options
are echoed in the client's command preview and audit views).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot import repo
from bot.cogs.base import (
    MANAGE_SERVER,
    PROVIDER_CHOICES,
    ConfigCog,
    ManagerGroup,
    health_line,
    is_manager,
    reply,
    require_manager,
    send,
    text,
)
from bot.cogs.forms import KeyModal
from bot.edge.limits import AUTOCOMPLETE_CHOICES_LIMIT
from bot.edge.translator import localized, named
from bot.vault import install_log_redaction
from providers.i18n import t

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)


class ServerKeyModal(KeyModal):
    """A key for this server's pool. The form may be submitted long after it opened, so
    the submitter must still manage the server."""

    def __init__(self, bot: LLMBot, locale: discord.Locale, provider: str, label: str | None) -> None:
        super().__init__(t("commands.modal.server_key_title", locale, provider=provider), locale)
        self.bot = bot
        self.provider = provider
        self.label = label

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        require_manager(interaction)
        return True

    async def on_submit(self, interaction: discord.Interaction, /) -> None:
        async with self.bot.sessions() as session, session.begin():
            info = await repo.add_server_key(session, self.bot.vault, interaction.guild_id, self.provider,
                                             self.key.value, self.label)
        log.info("guild %s added %s key %s", interaction.guild_id, info.provider, info.label)
        await reply(interaction, "commands.reply.key_added", provider=info.provider,
                    label=info.label, masked=info.masked)


class KeysCog(ConfigCog):
    keys = ManagerGroup(
        **named("commands.keys"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )

    @localized(keys.command, "commands.keys.add")
    @app_commands.choices(provider=PROVIDER_CHOICES)
    async def add(self, interaction: discord.Interaction, provider: str, label: str | None = None) -> None:
        provider = repo.check_provider(provider)
        await interaction.response.send_modal(ServerKeyModal(self.bot, interaction.locale, provider, label))

    @localized(keys.command, "commands.keys.list")
    async def list_(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session:
            infos = await repo.list_server_keys(session, interaction.guild_id, vault=self.bot.vault)
        if not infos:
            await reply(interaction, "commands.reply.keys_empty")
            return
        lines = [text(interaction, "commands.reply.keys_header")]
        lines += [health_line(interaction, k.provider, k.label, k.masked, k.health, k.undecryptable) for k in infos]
        await send(interaction, "\n".join(lines))

    @localized(keys.command, "commands.keys.remove")
    @app_commands.choices(provider=PROVIDER_CHOICES)
    async def remove(self, interaction: discord.Interaction, provider: str, label: str) -> None:
        async with self.bot.sessions() as session, session.begin():
            removed = await repo.remove_server_key(session, interaction.guild_id, provider, label)
        key = "commands.reply.key_removed" if removed else "commands.reply.key_not_found"
        await reply(interaction, key, provider=provider, label=label)

    @remove.autocomplete("label")
    async def label_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """This server's labels (for the chosen provider), for managers only (discord.py
        runs no interaction_check before an autocomplete)."""
        if not is_manager(interaction):
            return []
        provider = interaction.namespace.provider  # None until the member picks one
        async with self.bot.sessions() as session:
            infos = await repo.list_server_keys(session, interaction.guild_id, provider or None)
        return [app_commands.Choice(name=f"{k.provider} {k.label} {k.masked}", value=k.label)
                for k in infos if current.lower() in k.label.lower()][:AUTOCOMPLETE_CHOICES_LIMIT]


async def setup(bot: LLMBot) -> None:
    install_log_redaction()  # modal submits carry keys; discord.py logs raw events at DEBUG
    await bot.add_cog(KeysCog(bot))
