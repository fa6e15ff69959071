"""`/personal ...`: a member's own key and model (BYOK). Every command and the key form
read and write only the rows of whoever sent the interaction (`interaction.user.id`), for
this server or globally."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot import repo
from bot.capabilities.images.usage import image_usage_line
from bot.capabilities.reminders.commands import set_time_zone, time_zone_choices
from bot.capabilities.voice.usage import voice_usage_line
from bot.catalog.offer import offered, personal_list_route, unlisted_lines
from bot.check.command import check_own_route
from bot.cogs.base import RENAMED_TO, SCOPE_CHOICES, ConfigCog, renamed_note, reply, send, text
from bot.cogs.forms import KeyModal
from bot.edge.translator import localized, named
from bot.repo.personal import PersonalInfo
from bot.repo.usage import usage_by
from bot.usage.report import REPORT_DAYS, usage_lines
from bot.vault import install_log_redaction
from providers import Provider
from providers.i18n import t

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)

PERSONAL_PROVIDERS = [app_commands.Choice(name=p.value, value=p.value) for p in Provider if p is not Provider.CUSTOM]
SCOPE_LABELS = {"server": "commands.choice.scope_server", "global": "commands.choice.scope_global"}


@dataclass(frozen=True)
class Scope:
    """Where a personal setting applies: `guild_id` for this server, None for every server."""

    name: str
    guild_id: int | None

    def label(self, interaction: discord.Interaction) -> str:
        return text(interaction, SCOPE_LABELS[self.name])


def scope_of(interaction: discord.Interaction, chosen: str | None) -> Scope:
    """The chosen scope (this server by default inside one); "server" in a DM is refused."""
    name = chosen or ("server" if interaction.guild_id is not None else "global")
    if name == "server" and interaction.guild_id is None:
        raise app_commands.NoPrivateMessage()
    return Scope(name, interaction.guild_id if name == "server" else None)


def next_step(info: PersonalInfo, in_server: bool) -> str:
    """The one line that names what the member's own route still lacks where they are, or
    says it answers now (a DM needs no override: there is no server route to replace)."""
    if not info.masked_key:
        return "commands.reply.personal_next_key"
    if not (info.provider and info.model):
        return "commands.reply.personal_next_model"
    if in_server and not info.override_enabled:
        return "commands.reply.personal_next_override"
    return "commands.reply.personal_ready_server" if in_server else "commands.reply.personal_ready_dm"


class PersonalKeyModal(KeyModal):
    """The submitter's own key. Whose row it is and which server it is for come from the
    submit itself, never from whoever opened the form."""

    def __init__(self, bot: LLMBot, locale: discord.Locale, scope_name: str, renamed: str = "") -> None:
        super().__init__(t("commands.modal.personal_key_title", locale), locale)
        self.bot = bot
        self.scope_name = scope_name
        self.renamed = renamed  # the old command's note, said with the reply

    async def on_submit(self, interaction: discord.Interaction, /) -> None:
        scope = scope_of(interaction, self.scope_name)
        async with self.bot.sessions() as session, session.begin():
            info = await repo.set_personal_key(session, self.bot.vault, interaction.user.id, scope.guild_id,
                                               self.key.value)
        log.info("member %s stored a personal key (%s)", interaction.user.id, scope.name)
        said = text(interaction, "commands.reply.personal_key_set", masked=info.masked_key,
                    scope=scope.label(interaction))
        step = text(interaction, next_step(info, interaction.guild_id is not None))
        await send(interaction, "\n".join(filter(None, [self.renamed, said, step])))


class PersonalCog(ConfigCog):
    personal = app_commands.Group(
        **named("commands.personal"),
    )

    key = app_commands.Group(
        **named("commands.personal.key"),
        parent=personal,
    )

    @localized(key.command, "commands.personal.key.set")
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def key_set(self, interaction: discord.Interaction, scope: str | None = None) -> None:
        await self._open_key_form(interaction, scope)

    @localized(key.command, "commands.personal.key.clear")
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def key_clear(self, interaction: discord.Interaction, scope: str | None = None) -> None:
        await self._clear_key(interaction, scope)

    # The names before the verbs were made one scheme (`bot/cogs/help.py`): kept for one
    # release, hidden from /help, each saying its new name.
    @localized(personal.command, "commands.personal.key_set", extras={RENAMED_TO: "personal key set"})
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def old_key_set(self, interaction: discord.Interaction, scope: str | None = None) -> None:
        await self._open_key_form(interaction, scope, renamed_note(interaction))

    @localized(personal.command, "commands.personal.key_remove", extras={RENAMED_TO: "personal key clear"})
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def old_key_remove(self, interaction: discord.Interaction, scope: str | None = None) -> None:
        await self._clear_key(interaction, scope, renamed_note(interaction))

    async def _open_key_form(self, interaction: discord.Interaction, scope: str | None, renamed: str = "") -> None:
        chosen = scope_of(interaction, scope)  # refused in a DM before the form opens
        await interaction.response.send_modal(PersonalKeyModal(self.bot, interaction.locale, chosen.name, renamed))

    async def _clear_key(self, interaction: discord.Interaction, scope: str | None, renamed: str = "") -> None:
        where = scope_of(interaction, scope)
        async with self.bot.sessions() as session, session.begin():
            removed = await repo.remove_personal_key(session, interaction.user.id, where.guild_id)
        key = "commands.reply.personal_key_removed" if removed else "commands.reply.personal_key_none"
        await send(interaction, "\n".join(filter(None, [renamed, text(interaction, key, scope=where.label(interaction))])))

    @localized(personal.command, "commands.personal.model")
    @app_commands.choices(provider=PERSONAL_PROVIDERS, scope=SCOPE_CHOICES)
    async def model(self, interaction: discord.Interaction, provider: str, model: str,
                    scope: str | None = None) -> None:
        where = scope_of(interaction, scope)
        async with self.bot.sessions() as session, session.begin():
            info = await repo.set_personal_model(session, interaction.user.id, where.guild_id, provider, model)
        said = text(interaction, "commands.reply.personal_model_set", provider=info.provider,
                    model=info.model, scope=where.label(interaction))
        route = await personal_list_route(self.bot.config, self.bot.vault, interaction.user.id, where.guild_id,
                                          provider)
        warning = unlisted_lines(self.bot.access, route, info.model or model, interaction.locale)
        step = text(interaction, next_step(info, interaction.guild_id is not None))
        await send(interaction, "\n".join([said, *warning, step]))

    @model.autocomplete("model")
    async def model_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """The chosen provider's own model names, listed with the member's own key (for the
        chosen scope: this server's, else their global one)."""
        try:
            where = scope_of(interaction, interaction.namespace.scope)
        except app_commands.NoPrivateMessage:
            return []
        route = await personal_list_route(self.bot.config, self.bot.vault, interaction.user.id, where.guild_id,
                                          interaction.namespace.provider)
        return offered(self.bot.access, route, current)

    @localized(personal.command, "commands.personal.override")
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def override(self, interaction: discord.Interaction, enabled: bool, scope: str | None = None) -> None:
        where = scope_of(interaction, scope)
        async with self.bot.sessions() as session, session.begin():
            await repo.set_personal_override(session, interaction.user.id, where.guild_id, enabled)
        key = "commands.reply.personal_override_on" if enabled else "commands.reply.personal_override_off"
        await reply(interaction, key, scope=where.label(interaction))

    @localized(personal.command, "commands.personal.server_fallback")
    @app_commands.choices(scope=SCOPE_CHOICES)
    async def server_fallback(self, interaction: discord.Interaction, allowed: bool,
                              scope: str | None = None) -> None:
        where = scope_of(interaction, scope)
        async with self.bot.sessions() as session, session.begin():
            await repo.set_personal_server_fallback(session, interaction.user.id, where.guild_id, allowed)
        key = "commands.reply.personal_fallback_allowed" if allowed else "commands.reply.personal_fallback_denied"
        await reply(interaction, key, scope=where.label(interaction))

    @localized(personal.command, "commands.personal.usage")
    async def usage(self, interaction: discord.Interaction) -> None:
        """The caller's own usage in every server and DM (their rows only)."""
        day = datetime.now(UTC).date()
        async with self.bot.sessions() as session:
            today = await usage_by(session, day, user_id=interaction.user.id)
            month = await usage_by(session, day - timedelta(days=REPORT_DAYS - 1), user_id=interaction.user.id)
            drawn = await image_usage_line(session, self.bot.settings, interaction.user.id, day, REPORT_DAYS,
                                           partial(text, interaction))
            heard = await voice_usage_line(session, interaction.user.id, day, REPORT_DAYS, partial(text, interaction))
        lines = usage_lines(partial(text, interaction), "commands.reply.personal_usage_header", today, month)
        lines += [line for line in (drawn, heard) if line]
        await send(interaction, "\n".join(lines))

    @localized(personal.command, "commands.personal.timezone")
    async def timezone(self, interaction: discord.Interaction, zone: str) -> None:
        """The member's own time zone: reminder times are read and shown on its clock."""
        await set_time_zone(self.bot, interaction, zone)

    @timezone.autocomplete("zone")
    async def zone_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return time_zone_choices(current)

    @localized(personal.command, "commands.personal.check")
    async def check_route(self, interaction: discord.Interaction) -> None:
        """One live request per capability of the caller's own key and model (`bot.check`)."""
        await check_own_route(self.bot, interaction)


async def setup(bot: LLMBot) -> None:
    install_log_redaction()  # modal submits carry keys; discord.py logs raw events at DEBUG
    await bot.add_cog(PersonalCog(bot))
