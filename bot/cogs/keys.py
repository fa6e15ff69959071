"""`/keys add|list|remove`: the server's key rotation pool (Manage Server).

Keys are typed into a modal, never into a visible message or a command option (options
are echoed in the client's command preview and audit views).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import discord
from discord import app_commands
from discord.ext import commands

from bot import repo
from bot.cogs.base import (
    MANAGE_SERVER,
    PROVIDER_CHOICES,
    ConfigCog,
    health_line,
    reply,
    reply_error,
    send,
    text,
)
from bot.repo import RepositoryError
from bot.translator import lstr
from bot.vault import VaultError, install_log_redaction
from providers.i18n import t

log = logging.getLogger(__name__)

MODAL_TIMEOUT = 600.0


Store = Callable[[discord.Interaction, str], Awaitable[None]]


class KeyModal(discord.ui.Modal):
    """The private form a key is typed into; `store` decides where the key goes."""

    def __init__(self, title: str, locale: discord.Locale, store: Store) -> None:
        super().__init__(title=title[:45], timeout=MODAL_TIMEOUT)
        self._store = store
        self.key = discord.ui.TextInput(
            label=t("commands.modal.key_label", locale)[:45],
            placeholder=t("commands.modal.key_placeholder", locale)[:100],
            style=discord.TextStyle.short, required=True, max_length=1024,
        )
        self.add_item(self.key)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        try:
            await self._store(interaction, self.key.value)
        except RepositoryError as error:
            await reply_error(interaction, error)
        except VaultError:
            await reply(interaction, "commands.error.vault")

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
        # Only the type: an exception's text could quote what was submitted.
        log.error("key form failed with %s", type(error).__name__)
        await reply(interaction, "commands.error.internal")


class KeysCog(ConfigCog):
    keys = app_commands.Group(
        name=lstr("commands.keys.name"), description=lstr("commands.keys.description"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )

    @keys.command(name=lstr("commands.keys.add.name"), description=lstr("commands.keys.add.description"))
    @app_commands.rename(provider=lstr("commands.param.provider.name"), label=lstr("commands.param.label.name"))
    @app_commands.describe(provider=lstr("commands.param.provider.description"),
                           label=lstr("commands.param.label.description"))
    @app_commands.choices(provider=PROVIDER_CHOICES)
    async def add(self, interaction: discord.Interaction, provider: str, label: str | None = None) -> None:
        if not await self.require_manager(interaction):
            return
        try:
            provider = repo.check_provider(provider)
        except RepositoryError as error:
            await reply_error(interaction, error)
            return

        async def store(submit: discord.Interaction, secret: str) -> None:
            if not await self.require_manager(submit):
                return
            async with self.sessions() as session, session.begin():
                info = await repo.add_server_key(session, self.vault, submit.guild_id, provider,
                                                 secret, label)
            log.info("guild %s added %s key %s", submit.guild_id, info.provider, info.label)
            await reply(submit, "commands.reply.key_added", provider=info.provider,
                        label=info.label, masked=info.masked)

        title = t("commands.modal.server_key_title", interaction.locale, provider=provider)
        await interaction.response.send_modal(KeyModal(title, interaction.locale, store))

    @keys.command(name=lstr("commands.keys.list.name"), description=lstr("commands.keys.list.description"))
    async def list_(self, interaction: discord.Interaction) -> None:
        if not await self.require_manager(interaction):
            return
        async with self.sessions() as session:
            infos = await repo.list_server_keys(session, interaction.guild_id)
        if not infos:
            await reply(interaction, "commands.reply.keys_empty")
            return
        lines = [text(interaction, "commands.reply.keys_header")]
        lines += [health_line(interaction, k.provider, k.label, k.masked, k.health) for k in infos]
        await send(interaction, "\n".join(lines))

    @keys.command(name=lstr("commands.keys.remove.name"), description=lstr("commands.keys.remove.description"))
    @app_commands.rename(provider=lstr("commands.param.provider.name"), label=lstr("commands.param.label.name"))
    @app_commands.describe(provider=lstr("commands.param.provider.description"),
                           label=lstr("commands.param.label.description"))
    @app_commands.choices(provider=PROVIDER_CHOICES)
    async def remove(self, interaction: discord.Interaction, provider: str, label: str) -> None:
        if not await self.require_manager(interaction):
            return
        async with self.sessions() as session, session.begin():
            removed = await repo.remove_server_key(session, interaction.guild_id, provider, label)
        key = "commands.reply.key_removed" if removed else "commands.reply.key_not_found"
        await reply(interaction, key, provider=provider, label=label)

    @remove.autocomplete("label")
    async def label_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """This server's labels (for the chosen provider), for managers only."""
        if interaction.guild_id is None or not interaction.permissions.manage_guild:
            return []
        provider = getattr(interaction.namespace, "provider", None)
        async with self.sessions() as session:
            infos = await repo.list_server_keys(session, interaction.guild_id, provider or None)
        return [app_commands.Choice(name=f"{k.provider} {k.label} {k.masked}", value=k.label)
                for k in infos if current.lower() in k.label.lower()][:25]


async def setup(bot: commands.Bot) -> None:
    install_log_redaction()  # modal submits carry keys; discord.py logs raw events at DEBUG
    await bot.add_cog(KeysCog(bot))
