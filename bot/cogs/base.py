"""What the configuration cogs share: ephemeral localized replies, the Manage Server
gate, provider choices, and the mapping from refused input to a message.

Every reply here is ephemeral, and no reply, log line or exception text carries a key:
keys are shown only through `bot.vault.mask`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.repo import KeyHealth, RepositoryError
from bot.translator import lstr
from bot.vault import Vault
from providers import KNOWN_PROVIDERS
from providers.i18n import t

MAX_REPLY = 1900

PROVIDER_CHOICES = [app_commands.Choice(name=p, value=p) for p in KNOWN_PROVIDERS]
SCOPE_CHOICES = [
    app_commands.Choice(name=lstr("commands.choice.scope_server"), value="server"),
    app_commands.Choice(name=lstr("commands.choice.scope_global"), value="global"),
]
MANAGE_SERVER = discord.Permissions(manage_guild=True)

# RepositoryError.code -> catalog key (literal keys, so the catalog check can see them).
ERROR_KEYS: dict[str, str] = {
    "unknown_provider": "commands.error.unknown_provider",
    "bad_model": "commands.error.bad_model",
    "model_required": "commands.error.model_required",
    "endpoint_required": "commands.error.endpoint_required",
    "empty_key": "commands.error.empty_key",
    "bad_key": "commands.error.bad_key",
    "key_duplicate": "commands.error.key_duplicate",
    "label_taken": "commands.error.label_taken",
    "pool_full": "commands.error.pool_full",
    "fallback_duplicate": "commands.error.fallback_duplicate",
    "fallback_full": "commands.error.fallback_full",
    "personal_incomplete": "commands.error.personal_incomplete",
    "personal_custom_unsupported": "commands.error.personal_custom_unsupported",
}


def now() -> datetime:
    return datetime.now(UTC)


def text(interaction: discord.Interaction, key: str, **params: Any) -> str:
    """Catalog text in the invoking member's locale."""
    return t(key, interaction.locale, **params)


def clip(body: str) -> str:
    """Keep a reply inside Discord's message limit."""
    return body if len(body) <= MAX_REPLY else body[: MAX_REPLY - 1] + "\u2026"


async def reply(interaction: discord.Interaction, key: str, **params: Any) -> None:
    await send(interaction, text(interaction, key, **params))


async def send(interaction: discord.Interaction, body: str) -> None:
    """Ephemeral, whether or not the interaction was already answered."""
    body = clip(body)
    if interaction.response.is_done():
        await interaction.followup.send(body, ephemeral=True)
    else:
        await interaction.response.send_message(body, ephemeral=True)


async def reply_error(interaction: discord.Interaction, error: RepositoryError) -> None:
    await reply(interaction, ERROR_KEYS[error.code], **error.params)


def health_line(interaction: discord.Interaction, provider: str, label: str, masked: str,
                health: KeyHealth) -> str:
    """One masked key with its health, in the member's locale."""
    if health.cooling(now()):
        until = int(health.cooling_down_until.timestamp())  # type: ignore[union-attr]
        state = text(interaction, "commands.reply.key_state_cooling", until=f"<t:{until}:R>")
    else:
        state = text(interaction, "commands.reply.key_state_ready")
    return text(
        interaction, "commands.reply.key_line", provider=provider, label=label, masked=masked,
        successes=health.successes, errors=health.errors,
        last_error=health.last_error_type or text(interaction, "commands.reply.no_error"),
        state=state,
    )


class ConfigCog(commands.Cog):
    """Base for the configuration cogs: database sessions and the vault from the bot."""

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @property
    def sessions(self):
        return self.bot.sessions  # type: ignore[attr-defined]

    @property
    def vault(self) -> Vault:
        return Vault(self.bot.encryption_keys)  # type: ignore[attr-defined]

    async def require_manager(self, interaction: discord.Interaction) -> bool:
        """The runtime half of the Manage Server rule (default_permissions is the other):
        server admins can re-grant a command to anyone, so the handler checks again."""
        if interaction.guild_id is None:
            await reply(interaction, "commands.error.guild_only")
            return False
        if not interaction.permissions.manage_guild:
            await reply(interaction, "commands.error.manage_server_required")
            return False
        return True
