"""`/persona set|show|clear` (Manage Server): the text that sets the bot's voice, for the
whole server or for one channel (where it replaces the server's; a thread uses its
parent channel's). The text is written in a form, pre-filled with the current one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.cogs.base import (
    MANAGE_SERVER,
    MAX_REPLY,
    ConfigCog,
    ManagerGroup,
    reply,
    require_manager,
    send,
    text,
)
from bot.cogs.forms import MODAL_TIMEOUT, ConfigModal
from bot.edge.limits import (
    MODAL_TITLE_LIMIT,
    TEXT_INPUT_LABEL_LIMIT,
    TEXT_INPUT_PLACEHOLDER_LIMIT,
)
from bot.edge.translator import localized, lstr, named
from bot.question.persona import persona_channel_id
from bot.repo.controls import MAX_PERSONA_LENGTH, clear_persona, get_persona, set_persona
from providers.i18n import t

if TYPE_CHECKING:
    from bot.app import LLMBot

PERSONA_SCOPES = [
    app_commands.Choice(name=lstr("commands.choice.scope_server"), value="server"),
    app_commands.Choice(name=lstr("commands.choice.scope_channel"), value="channel"),
]


def scope_channel(interaction: discord.Interaction, scope: str) -> int | None:
    """None for the server's persona, else the channel the command runs in (a thread's parent)."""
    if scope != "channel":
        return None
    return persona_channel_id(interaction.channel) or interaction.channel_id


def scope_name(interaction: discord.Interaction, channel_id: int | None) -> str:
    if channel_id is None:
        return text(interaction, "commands.persona.scope_server")
    return text(interaction, "commands.persona.scope_channel", channel=f"<#{channel_id}>")


def pieces(body: str, size: int = MAX_REPLY) -> list[str]:
    return [body[i:i + size] for i in range(0, len(body), size)]


class PersonaModal(ConfigModal):
    """One paragraph field holding the persona. The form may be submitted long after it
    opened, so the submitter must still manage the server."""

    def __init__(self, bot: LLMBot, locale: discord.Locale, channel_id: int | None, current: str | None) -> None:
        super().__init__(title=t("commands.persona.modal_title", locale)[:MODAL_TITLE_LIMIT], timeout=MODAL_TIMEOUT)
        self.bot = bot
        self.channel_id = channel_id
        self.body: discord.ui.TextInput[PersonaModal] = discord.ui.TextInput(
            label=t("commands.persona.modal_label", locale)[:TEXT_INPUT_LABEL_LIMIT],
            placeholder=t("commands.persona.modal_placeholder", locale)[:TEXT_INPUT_PLACEHOLDER_LIMIT],
            style=discord.TextStyle.paragraph, required=True, max_length=MAX_PERSONA_LENGTH,
            default=current,
        )
        self.add_item(self.body)

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        require_manager(interaction)
        return True

    async def on_submit(self, interaction: discord.Interaction, /) -> None:
        async with self.bot.sessions() as session, session.begin():
            stored = await set_persona(session, interaction.guild_id, self.channel_id, self.body.value)
        await reply(interaction, "commands.persona.saved", scope=scope_name(interaction, self.channel_id),
                    length=len(stored))


class PersonaCog(ConfigCog):
    persona = ManagerGroup(
        **named("commands.persona"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )

    @localized(persona.command, "commands.persona.set", params={"scope": "persona_scope"})
    @app_commands.choices(scope=PERSONA_SCOPES)
    async def set_(self, interaction: discord.Interaction, scope: str = "server") -> None:
        channel_id = scope_channel(interaction, scope)
        async with self.bot.sessions() as session:
            current = await get_persona(session, interaction.guild_id, channel_id)
        await interaction.response.send_modal(PersonaModal(self.bot, interaction.locale, channel_id, current))

    @localized(persona.command, "commands.persona.show", params={"scope": "persona_scope"})
    @app_commands.choices(scope=PERSONA_SCOPES)
    async def show(self, interaction: discord.Interaction, scope: str = "server") -> None:
        channel_id = scope_channel(interaction, scope)
        async with self.bot.sessions() as session:
            current = await get_persona(session, interaction.guild_id, channel_id)
        if current is None:
            await reply(interaction, "commands.persona.none", scope=scope_name(interaction, channel_id))
            return
        header = text(interaction, "commands.persona.header", scope=scope_name(interaction, channel_id))
        for part in pieces(f"{header}\n{current}"):  # up to 4,000 characters: more than one message holds
            await send(interaction, part)

    @localized(persona.command, "commands.persona.clear", params={"scope": "persona_scope"})
    @app_commands.choices(scope=PERSONA_SCOPES)
    async def clear(self, interaction: discord.Interaction, scope: str = "server") -> None:
        channel_id = scope_channel(interaction, scope)
        async with self.bot.sessions() as session, session.begin():
            removed = await clear_persona(session, interaction.guild_id, channel_id)
        key = "commands.persona.cleared" if removed else "commands.persona.none"
        await reply(interaction, key, scope=scope_name(interaction, channel_id))


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(PersonaCog(bot))
