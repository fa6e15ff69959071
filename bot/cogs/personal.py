"""`/personal ...`: a member's own key and model (BYOK). Every command reads and writes
only the caller's rows (`interaction.user.id`), for this server or globally."""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot import repo
from bot.cogs.base import SCOPE_CHOICES, ConfigCog, reply, reply_error, text
from bot.cogs.keys import KeyModal
from bot.repo import RepositoryError
from bot.translator import lstr
from bot.vault import install_log_redaction
from providers import KNOWN_PROVIDERS
from providers.i18n import t

log = logging.getLogger(__name__)

PERSONAL_PROVIDERS = [app_commands.Choice(name=p, value=p) for p in KNOWN_PROVIDERS if p != "custom"]
SCOPE_LABELS = {"server": "commands.choice.scope_server", "global": "commands.choice.scope_global"}


class PersonalCog(ConfigCog):
    personal = app_commands.Group(
        name=lstr("commands.personal.name"), description=lstr("commands.personal.description"),
    )

    async def _scope(self, interaction: discord.Interaction, scope: str | None) -> tuple[bool, int | None, str]:
        """(ok, guild_id or None for global, scope label); defaults to this server in one."""
        chosen = scope or ("server" if interaction.guild_id is not None else "global")
        if chosen == "server" and interaction.guild_id is None:
            await reply(interaction, "commands.error.guild_only")
            return False, None, chosen
        label = text(interaction, SCOPE_LABELS[chosen])
        return True, (interaction.guild_id if chosen == "server" else None), label

    @personal.command(name=lstr("commands.personal.key_set.name"),
                      description=lstr("commands.personal.key_set.description"))
    @app_commands.rename(scope=lstr("commands.param.scope.name"))
    @app_commands.describe(scope=lstr("commands.param.scope.description"))
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def key_set(self, interaction: discord.Interaction, scope: str | None = None) -> None:
        ok, guild_id, label = await self._scope(interaction, scope)
        if not ok:
            return
        user_id = interaction.user.id

        async def store(submit: discord.Interaction, secret: str) -> None:
            async with self.sessions() as session, session.begin():
                info = await repo.set_personal_key(session, self.vault, user_id, guild_id, secret)
            log.info("member %s stored a personal key (%s)", user_id, "server" if guild_id else "global")
            await reply(submit, "commands.reply.personal_key_set", masked=info.masked_key, scope=label)

        title = t("commands.modal.personal_key_title", interaction.locale)
        await interaction.response.send_modal(KeyModal(title, interaction.locale, store))

    @personal.command(name=lstr("commands.personal.key_remove.name"),
                      description=lstr("commands.personal.key_remove.description"))
    @app_commands.rename(scope=lstr("commands.param.scope.name"))
    @app_commands.describe(scope=lstr("commands.param.scope.description"))
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def key_remove(self, interaction: discord.Interaction, scope: str | None = None) -> None:
        ok, guild_id, label = await self._scope(interaction, scope)
        if not ok:
            return
        async with self.sessions() as session, session.begin():
            removed = await repo.remove_personal_key(session, interaction.user.id, guild_id)
        key = "commands.reply.personal_key_removed" if removed else "commands.reply.personal_key_none"
        await reply(interaction, key, scope=label)

    @personal.command(name=lstr("commands.personal.model.name"),
                      description=lstr("commands.personal.model.description"))
    @app_commands.rename(provider=lstr("commands.param.provider.name"), model=lstr("commands.param.model.name"),
                         scope=lstr("commands.param.scope.name"))
    @app_commands.describe(provider=lstr("commands.param.provider.description"),
                           model=lstr("commands.param.model.description"),
                           scope=lstr("commands.param.scope.description"))
    @app_commands.choices(provider=PERSONAL_PROVIDERS, scope=SCOPE_CHOICES)
    async def model(self, interaction: discord.Interaction, provider: str, model: str,
                    scope: str | None = None) -> None:
        ok, guild_id, label = await self._scope(interaction, scope)
        if not ok:
            return
        try:
            async with self.sessions() as session, session.begin():
                info = await repo.set_personal_model(session, interaction.user.id, guild_id, provider, model)
        except RepositoryError as error:
            await reply_error(interaction, error)
            return
        await reply(interaction, "commands.reply.personal_model_set", provider=info.provider,
                    model=info.model, scope=label)

    @personal.command(name=lstr("commands.personal.override.name"),
                      description=lstr("commands.personal.override.description"))
    @app_commands.rename(enabled=lstr("commands.param.enabled.name"), scope=lstr("commands.param.scope.name"))
    @app_commands.describe(enabled=lstr("commands.param.enabled.description"),
                           scope=lstr("commands.param.scope.description"))
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def override(self, interaction: discord.Interaction, enabled: bool, scope: str | None = None) -> None:
        ok, guild_id, label = await self._scope(interaction, scope)
        if not ok:
            return
        try:
            async with self.sessions() as session, session.begin():
                await repo.set_personal_override(session, interaction.user.id, guild_id, enabled)
        except RepositoryError as error:
            await reply_error(interaction, error)
            return
        key = "commands.reply.personal_override_on" if enabled else "commands.reply.personal_override_off"
        await reply(interaction, key, scope=label)

    @personal.command(name=lstr("commands.personal.server_fallback.name"),
                      description=lstr("commands.personal.server_fallback.description"))
    @app_commands.rename(allowed=lstr("commands.param.allowed.name"), scope=lstr("commands.param.scope.name"))
    @app_commands.describe(allowed=lstr("commands.param.allowed.description"),
                           scope=lstr("commands.param.scope.description"))
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def server_fallback(self, interaction: discord.Interaction, allowed: bool,
                              scope: str | None = None) -> None:
        ok, guild_id, label = await self._scope(interaction, scope)
        if not ok:
            return
        async with self.sessions() as session, session.begin():
            await repo.set_personal_server_fallback(session, interaction.user.id, guild_id, allowed)
        key = "commands.reply.personal_fallback_allowed" if allowed else "commands.reply.personal_fallback_denied"
        await reply(interaction, key, scope=label)


async def setup(bot: commands.Bot) -> None:
    install_log_redaction()  # modal submits carry keys; discord.py logs raw events at DEBUG
    await bot.add_cog(PersonalCog(bot))
