"""Which servers the bot serves: all of them, or only those in ALLOWED_SERVERS.

A Discord application is public by default: anyone may add the bot to their server, and
every server that set up nothing answers on the operator's default route, so strangers
spend the operator's keys. The allowlist is that risk's fix on the bot's side (the other
is Discord's Public Bot switch). Pure: the question, the command tree and the servers cog
ask it; leaving a server is the cog's (`bot.cogs.servers`).
"""

from __future__ import annotations

from discord import app_commands
from discord.interactions import Interaction

PUBLIC_WITHOUT_ALLOWLIST = (
    "the application is public and ALLOWED_SERVERS is not set: anyone can add the bot to a server "
    "and spend the default route's keys; turn off Public Bot (Developer Portal, Bot page) or set "
    "ALLOWED_SERVERS to your server ids")


def serves(allowed: frozenset[int], guild_id: int | None) -> bool:
    """Whether the bot serves `guild_id` (None: a DM, which its own settings govern)."""
    return guild_id is None or not allowed or guild_id in allowed


def public_risk(bot_public: bool, allowed: frozenset[int]) -> str | None:
    """The start-up warning when strangers could add the bot, or None."""
    return PUBLIC_WITHOUT_ALLOWLIST if bot_public and not allowed else None


class ServingTree(app_commands.CommandTree):
    """The command tree that ignores commands from a server the bot does not serve (it is
    leaving that server): nothing runs and nothing is written."""

    async def interaction_check(self, interaction: Interaction, /) -> bool:
        allowed = interaction.client.settings.ALLOWED_SERVERS  # type: ignore[attr-defined]
        return serves(allowed, interaction.guild_id)
