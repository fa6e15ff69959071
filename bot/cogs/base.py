"""What the configuration cogs share: ephemeral localized replies, the Manage Server
gate, provider choices, and the one place where a refused or failed command becomes a
message.

Every reply here is ephemeral, and no reply, log line or exception text carries a key:
keys are shown only through `bot.vault.mask`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.edge.command_names import for_discord
from bot.edge.limits import MESSAGE_LIMIT
from bot.edge.translator import lstr
from bot.repo import KeyHealth, RepositoryError
from bot.vault import VaultError
from providers import KNOWN_PROVIDERS
from providers.i18n import t

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)

MAX_REPLY = MESSAGE_LIMIT - 100  # room for Discord's own decorations of an ephemeral reply

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
    "control_characters": "commands.error.control_characters",
    "conflict": "commands.error.conflict",
    "bad_limit": "commands.error.bad_limit",
    "bad_price": "commands.error.bad_price",
    "bad_temperature": "commands.error.bad_temperature",
    "bad_max_output_tokens": "commands.error.bad_max_output_tokens",
    "bad_reasoning": "commands.error.bad_reasoning",
    "persona_too_long": "commands.error.persona_too_long",
    "persona_empty": "commands.error.persona_empty",
    "persona_control_characters": "commands.error.persona_control_characters",
}
# A refusal the repository learned after this table was written still gets a sentence.
GENERIC_ERROR_KEY = "commands.error.internal"


def now() -> datetime:
    return datetime.now(UTC)


def text(interaction: discord.Interaction, key: str, **params: Any) -> str:
    """Catalog text in the invoking member's locale, the commands it names as the member's
    client shows them."""
    return for_discord(t(key, interaction.locale, **params), interaction.locale)


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


def health_line(interaction: discord.Interaction, provider: str, label: str, masked: str,
                health: KeyHealth, undecryptable: bool = False) -> str:
    """One masked key with its health, in the member's locale; a key the vault cannot open
    says so (it is skipped by every turn until it is added again)."""
    until = health.cooling_down_until
    if undecryptable:
        state = text(interaction, "commands.reply.key_state_undecryptable")
    elif until is not None and health.cooling(now()):
        stamp = f"<t:{int(until.timestamp())}:R>"
        state = text(interaction, "commands.reply.key_state_cooling", until=stamp)
    else:
        state = text(interaction, "commands.reply.key_state_ready")
    return text(
        interaction, "commands.reply.key_line", provider=provider, label=label, masked=masked,
        successes=health.successes, errors=health.errors,
        last_error=health.last_error_type or text(interaction, "commands.reply.no_error"),
        state=state,
    )


# ---- renamed commands ------------------------------------------------------------------

# A command kept under its old name for one release carries its new path (English) here.
RENAMED_TO = "renamed_to"


def renamed_note(interaction: discord.Interaction) -> str:
    """The line an old name says first: which command it now is."""
    command = interaction.command
    if command is None or RENAMED_TO not in command.extras:
        return ""
    return text(interaction, "commands.reply.renamed", old=f"/{command.qualified_name}",
                new=f"/{command.extras[RENAMED_TO]}")


# ---- the Manage Server gate ----------------------------------------------------------

def is_manager(interaction: discord.Interaction) -> bool:
    """Inside a server, with Manage Server (for views that only show more to managers)."""
    return interaction.guild_id is not None and interaction.permissions.manage_guild


def require_manager(interaction: discord.Interaction) -> None:
    """Raise the check failure that `answer_failure` turns into the localized refusal."""
    if interaction.guild_id is None:
        raise app_commands.NoPrivateMessage()
    if not interaction.permissions.manage_guild:
        raise app_commands.MissingPermissions(["manage_guild"])


class ManagerGroup(app_commands.Group):
    """A command group only for members with Manage Server.

    `default_permissions` only hides the commands in the client, and server admins can
    re-grant them to anyone, so every invocation is checked again here. discord.py runs
    the check of a command's direct parent only: a subgroup must be a ManagerGroup too.
    """

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        require_manager(interaction)
        return True


# ---- failures become localized replies -------------------------------------------------

def refusal_key(error: BaseException) -> tuple[str, dict[str, Any]] | None:
    """The catalog key (and its parameters) for a failure the member should read about;
    None for a fault of the bot itself."""
    if isinstance(error, RepositoryError):
        key = ERROR_KEYS.get(error.code)
        if key is None:
            log.warning("no message for repository refusal %r; answering generically", error.code)
            return GENERIC_ERROR_KEY, {}
        return key, dict(error.params)
    if isinstance(error, VaultError):
        return "commands.error.vault", {}
    if isinstance(error, app_commands.NoPrivateMessage):
        return "commands.error.guild_only", {}
    if isinstance(error, app_commands.MissingPermissions):
        return "commands.error.manage_server_required", {}
    return None


async def answer_failure(interaction: discord.Interaction, error: BaseException) -> bool:
    """Reply the localized line for a refusal; False (nothing sent) for a fault of the bot."""
    found = refusal_key(error)
    if found is None:
        return False
    key, params = found
    await reply(interaction, key, **params)
    return True


class ConfigCog(commands.Cog):
    """Base for the configuration cogs: commands read `self.bot.sessions`, `.vault` and
    `.settings`, and raise their refusals; this one handler answers for every command."""

    def __init__(self, bot: LLMBot) -> None:
        self.bot = bot

    async def cog_app_command_error(self, interaction: discord.Interaction,
                                    error: app_commands.AppCommandError) -> None:
        """Refusals (bad input, a missing permission) become their localized line; anything
        else is logged and the member reads that nothing was stored."""
        cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
        if await answer_failure(interaction, cause):
            return
        name = interaction.command.qualified_name if interaction.command is not None else "?"
        log.error("command /%s failed", name, exc_info=cause)
        await reply(interaction, "commands.error.internal")
