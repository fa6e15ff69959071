"""`/channels ...` (where the bot answers, and where it listens without a mention) and
`/access ...` (for whom), Manage Server only.

The decision itself is `bot.question.admission`; these commands only store what managers chose.
A listen channel the channel rules keep the bot out of is stored all the same, with a
warning: the rules are the managers' word on where the bot speaks, and listening does not
overrule them (lifting the rule later makes the channel listen at once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.listening.settings import LISTENING
from bot.capabilities.listening.storage import (
    DEFAULT_LISTEN_GAP,
    MAX_LISTEN_CHANNELS,
    MAX_LISTEN_GAP,
    listen_channels,
    listen_gap_allowed,
    remove_listen_channel,
    set_listen_channel,
)
from bot.cogs.base import MANAGE_SERVER, ConfigCog, ManagerGroup, reply, send, text
from bot.edge.translator import localized, lstr, named
from bot.repo.capability_settings import read_values
from bot.repo.controls import (
    GuildControls,
    add_access_rule,
    count_channel_personas,
    get_persona,
    read_controls,
    remove_access_rule,
    set_channel_mode,
    set_channel_rule,
)

if TYPE_CHECKING:
    from bot.app import LLMBot

MODE_CHOICES = [
    app_commands.Choice(name=lstr("commands.choice.mode_everywhere"), value="everywhere"),
    app_commands.Choice(name=lstr("commands.choice.mode_allowlist"), value="allowlist"),
]
MODE_KEYS = {"everywhere": "commands.channels.mode_everywhere", "allowlist": "commands.channels.mode_allowlist"}
AnyChannel = app_commands.AppCommandChannel | app_commands.AppCommandThread
Target = discord.Member | discord.User | discord.Role


def mentions(ids: frozenset[int], form: str) -> str:
    return ", ".join(form.format(i) for i in sorted(ids)) or "-"


def channel_lines(interaction: discord.Interaction, controls: GuildControls) -> list[str]:
    return [text(interaction, MODE_KEYS[controls.mode]),
            text(interaction, "commands.channels.allowed", channels=mentions(controls.allowed, "<#{}>")),
            text(interaction, "commands.channels.denied", channels=mentions(controls.denied, "<#{}>"))]


def access_lines(interaction: discord.Interaction, controls: GuildControls) -> list[str]:
    return [text(interaction, "commands.access.blocked_members", members=mentions(controls.blocked_members, "<@{}>")),
            text(interaction, "commands.access.blocked_roles", roles=mentions(controls.blocked_roles, "<@&{}>")),
            text(interaction, "commands.access.required_roles", roles=mentions(controls.required_roles, "<@&{}>"))]


def seconds(value: float) -> str:
    """2.0 -> "2", 2.5 -> "2.5": how a stored number of seconds is shown."""
    return f"{value:g}"


def listening_lines(interaction: discord.Interaction, listening: Mapping[int, float], batch: float) -> list[str]:
    """The listen channels with their gaps, and the batch window for back-to-back messages."""
    entries = ", ".join(text(interaction, "commands.channels.listen_entry", channel=f"<#{channel_id}>",
                             gap=seconds(gap)) for channel_id, gap in listening.items()) or "-"
    batch_line = (text(interaction, "commands.channels.batch", seconds=seconds(batch)) if batch > 0
                  else text(interaction, "commands.channels.batch_off"))
    return [text(interaction, "commands.channels.listening", channels=entries), batch_line]


async def read_listening(session: AsyncSession, guild_id: int) -> tuple[dict[int, float], float]:
    """The listen channels and the batch window, as `listening_lines` takes them."""
    batch = (await read_values(session, LISTENING, guild_id))["batch_seconds"]
    return await listen_channels(session, guild_id), float(batch)


def is_category(channel: AnyChannel) -> bool:
    """A category's rule covers every channel in it and their threads (admission reads
    each message's category)."""
    return channel.type == discord.ChannelType.category


def rule_warning(interaction: discord.Interaction, controls: GuildControls, channel_id: int) -> str | None:
    """Why the channel rules keep the bot silent in a listen channel, or None."""
    if channel_id in controls.denied:
        return text(interaction, "commands.channels.listen_denied", channel=f"<#{channel_id}>")
    if controls.mode == "allowlist" and channel_id not in controls.allowed:
        return text(interaction, "commands.channels.listen_not_allowed", channel=f"<#{channel_id}>")
    return None


async def status_lines(interaction: discord.Interaction, session: AsyncSession) -> list[str]:
    """The persona, channel, listening and access settings of this server, for a manager's /status."""
    guild_id = interaction.guild_id
    controls = await read_controls(session, guild_id)
    server_persona = await get_persona(session, guild_id, None)
    persona = text(interaction, "commands.status.persona_set" if server_persona else "commands.status.persona_unset",
                   channels=await count_channel_personas(session, guild_id))
    counts = text(interaction, "commands.status.channel_rules", allowed=len(controls.allowed),
                  denied=len(controls.denied))
    listening = listening_lines(interaction, *await read_listening(session, guild_id))
    return [persona, text(interaction, MODE_KEYS[controls.mode]), counts, *listening,
            *access_lines(interaction, controls)]


def target_of(target: Target) -> tuple[str, tuple[str, ...]]:
    """How the target is shown, and the rule kind that blocks it."""
    if isinstance(target, discord.Role):
        return f"<@&{target.id}>", ("block_role",)
    return f"<@{target.id}>", ("block_member",)


class AccessCog(ConfigCog):
    channels = ManagerGroup(
        **named("commands.channels"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )
    access = ManagerGroup(
        **named("commands.access"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )

    async def _controls(self, guild_id: int) -> GuildControls:
        async with self.bot.sessions() as session:
            return await read_controls(session, guild_id)

    # ---- where ---------------------------------------------------------------------------

    @localized(channels.command, "commands.channels.mode")
    @app_commands.choices(mode=MODE_CHOICES)
    async def mode(self, interaction: discord.Interaction, mode: str) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_channel_mode(session, interaction.guild_id, mode)
        await reply(interaction, MODE_KEYS[mode])

    @localized(channels.command, "commands.channels.allow", params={"channel": "rule_channel"})
    async def allow(self, interaction: discord.Interaction, channel: AnyChannel) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_channel_rule(session, interaction.guild_id, channel.id, "allow")
        key = "commands.channels.allowed_category" if is_category(channel) else "commands.channels.allowed_one"
        await reply(interaction, key, channel=f"<#{channel.id}>")

    @localized(channels.command, "commands.channels.deny", params={"channel": "rule_channel"})
    async def deny(self, interaction: discord.Interaction, channel: AnyChannel) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_channel_rule(session, interaction.guild_id, channel.id, "deny")
        key = "commands.channels.denied_category" if is_category(channel) else "commands.channels.denied_one"
        await reply(interaction, key, channel=f"<#{channel.id}>")

    @localized(channels.command, "commands.channels.listen")
    async def listen(self, interaction: discord.Interaction, channel: discord.TextChannel,
                     gap: app_commands.Range[float, 0.0, MAX_LISTEN_GAP] = DEFAULT_LISTEN_GAP) -> None:
        """Discord's client keeps `gap` in range; any other client's value is refused here."""
        if not listen_gap_allowed(gap):
            await reply(interaction, "commands.error.listen_gap_out_of_range", limit=seconds(MAX_LISTEN_GAP))
            return
        async with self.bot.sessions() as session, session.begin():
            result = await set_listen_channel(session, interaction.guild_id, channel.id, gap)
            controls = await read_controls(session, interaction.guild_id)
        if result == "full":
            await reply(interaction, "commands.error.listen_full", limit=MAX_LISTEN_CHANNELS)
            return
        lines = [text(interaction, "commands.channels.listening_one", channel=f"<#{channel.id}>", gap=seconds(gap))]
        warning = rule_warning(interaction, controls, channel.id)
        await send(interaction, "\n".join(lines if warning is None else [*lines, warning]))

    @localized(channels.command, "commands.channels.listen_stop")
    async def listen_stop(self, interaction: discord.Interaction, channel: discord.TextChannel) -> None:
        async with self.bot.sessions() as session, session.begin():
            removed = await remove_listen_channel(session, interaction.guild_id, channel.id)
        await reply(interaction, "commands.channels.listen_stopped" if removed else "commands.channels.not_listening",
                    channel=f"<#{channel.id}>")

    @localized(channels.command, "commands.channels.list")
    async def list_channels(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session:
            controls = await read_controls(session, interaction.guild_id)
            listening = await read_listening(session, interaction.guild_id)
        await send(interaction, "\n".join([*channel_lines(interaction, controls),
                                            *listening_lines(interaction, *listening)]))

    # ---- for whom ------------------------------------------------------------------------

    @localized(access.command, "commands.access.block")
    async def block(self, interaction: discord.Interaction, target: Target) -> None:
        shown, kinds = target_of(target)
        async with self.bot.sessions() as session, session.begin():
            await add_access_rule(session, interaction.guild_id, target.id, kinds[0])
        await reply(interaction, "commands.access.blocked", target=shown)

    @localized(access.command, "commands.access.unblock")
    async def unblock(self, interaction: discord.Interaction, target: Target) -> None:
        shown, kinds = target_of(target)
        async with self.bot.sessions() as session, session.begin():
            removed = await remove_access_rule(session, interaction.guild_id, target.id, kinds)
        await reply(interaction, "commands.access.unblocked" if removed else "commands.access.not_blocked",
                    target=shown)

    @localized(access.command, "commands.access.require_role")
    async def require_role(self, interaction: discord.Interaction, role: discord.Role) -> None:
        async with self.bot.sessions() as session, session.begin():
            await add_access_rule(session, interaction.guild_id, role.id, "require_role")
        await reply(interaction, "commands.access.role_required", role=f"<@&{role.id}>")

    @localized(access.command, "commands.access.unrequire_role")
    async def unrequire_role(self, interaction: discord.Interaction, role: discord.Role) -> None:
        async with self.bot.sessions() as session, session.begin():
            removed = await remove_access_rule(session, interaction.guild_id, role.id, ("require_role",))
        await reply(interaction, "commands.access.role_unrequired" if removed else "commands.access.role_not_required",
                    role=f"<@&{role.id}>")

    @localized(access.command, "commands.access.list")
    async def list_access(self, interaction: discord.Interaction) -> None:
        await send(interaction, "\n".join(access_lines(interaction, await self._controls(interaction.guild_id))))


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(AccessCog(bot))
