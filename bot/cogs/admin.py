"""`/settings ...` (Manage Server switches) and `/status` (the route a member's turn takes)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from sqlalchemy.ext.asyncio import AsyncSession

from bot import repo
from bot.capabilities.declarations import DECLARATIONS
from bot.capabilities.web_search.settings import model_that_cannot_search
from bot.cogs.access import status_lines as control_lines
from bot.cogs.base import (
    MANAGE_SERVER,
    ConfigCog,
    ManagerGroup,
    health_line,
    is_manager,
    reply,
    send,
    text,
)
from bot.cogs.declared_settings import add_declared, place, status_lines
from bot.edge.translator import lstr
from bot.repo import ActiveRoute
from bot.repo.routes import keyless_targets
from bot.settings import Settings
from bot.usage.report import refusal_lines, settings_lines

if TYPE_CHECKING:
    from bot.app import LLMBot

ROUTE_KEYS = {
    "personal": "commands.status.route_personal",
    "server": "commands.status.route_server",
    "environment": "commands.status.route_environment",
}
BLOCKED_KEYS = {
    "member_key_required": "commands.status.blocked_member_key_required",
    "no_route": "commands.status.blocked_no_route",
    "server_keys_required": "commands.status.blocked_server_keys_required",
    "personal_model_missing": "chat.personal_model_missing",
    "personal_key_missing": "chat.personal_key_missing",
}
# In a DM the route is the member's own or the bot's default: no server manager to ask.
DM_KEYS = {
    "commands.status.blocked_no_route": "commands.status.blocked_no_route_dm",
    "commands.status.route_environment": "commands.status.route_environment_dm",
    "commands.status.server_fallback": "commands.status.server_fallback_dm",
}


class AdminCog(ConfigCog):
    settings_group = ManagerGroup(
        name=lstr("commands.settings.name"), description=lstr("commands.settings.description"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )

    @settings_group.command(name=lstr("commands.settings.verbatim_tools.name"),
                            description=lstr("commands.settings.verbatim_tools.description"))
    @app_commands.rename(enabled=lstr("commands.param.enabled.name"))
    @app_commands.describe(enabled=lstr("commands.param.enabled.description"))
    async def verbatim_tools(self, interaction: discord.Interaction, enabled: bool) -> None:
        async with self.bot.sessions() as session, session.begin():
            await repo.set_verbatim_tool_calling(session, interaction.guild_id, enabled)
        await reply(interaction, "commands.reply.verbatim_on" if enabled else "commands.reply.verbatim_off")

    @settings_group.command(name=lstr("commands.settings.thought_log_set.name"),
                            description=lstr("commands.settings.thought_log_set.description"))
    @app_commands.rename(channel=lstr("commands.param.channel.name"))
    @app_commands.describe(channel=lstr("commands.param.channel.description"))
    async def thought_log_set(self, interaction: discord.Interaction, channel: discord.TextChannel) -> None:
        async with self.bot.sessions() as session, session.begin():
            await repo.set_thought_log_channel(session, interaction.guild_id, channel.id)
        await reply(interaction, "commands.reply.thought_log_set", channel=f"<#{channel.id}>")

    @settings_group.command(name=lstr("commands.settings.thought_log_clear.name"),
                            description=lstr("commands.settings.thought_log_clear.description"))
    async def thought_log_clear(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session, session.begin():
            await repo.set_thought_log_channel(session, interaction.guild_id, None)
        await reply(interaction, "commands.reply.thought_log_cleared")

    @settings_group.command(name=lstr("commands.settings.member_keys.name"),
                            description=lstr("commands.settings.member_keys.description"))
    @app_commands.rename(required=lstr("commands.param.required.name"))
    @app_commands.describe(required=lstr("commands.param.required.description"))
    async def member_keys(self, interaction: discord.Interaction, required: bool) -> None:
        async with self.bot.sessions() as session, session.begin():
            await repo.set_member_keys_required(session, interaction.guild_id, required)
        await reply(interaction, "commands.reply.member_keys_on" if required else "commands.reply.member_keys_off")

    add_declared(settings_group, DECLARATIONS)  # history, threads, web search, ...: from their declarations

    @app_commands.command(name=lstr("commands.status.name"), description=lstr("commands.status.description"))
    async def status(self, interaction: discord.Interaction) -> None:
        """Everyone sees their own route; key pool health and the server's settings only
        managers (Manage Server); in a DM, that the operator's default searches the web, when it does."""
        settings = self.bot.settings
        async with self.bot.sessions() as session:
            route = await repo.resolve_active_route(session, settings, interaction.guild_id, interaction.user.id)
            lines = [text(interaction, "commands.status.title")] + self._route_lines(interaction, route)
            lines += [text(interaction, "commands.status.no_key_needed", provider=target.provider, model=target.model)
                      for target in await keyless_targets(session, settings, interaction.guild_id, route)]
            targets = [*route.chain, *(route.server_fallback.chain if route.server_fallback else ())]
            lines += refusal_lines(partial(text, interaction),
                                   [(t.model, r) for t in targets for r in self.bot.access.refusals(t)])
            if route.personal is not None and route.personal.masked_key is not None:
                lines.append(text(interaction, "commands.status.personal_key_header"))
                lines.append(health_line(interaction, route.personal.provider or "-",
                                         text(interaction, "commands.status.personal_label"),
                                         route.personal.masked_key, route.personal.health))
            if is_manager(interaction):
                lines += await self._pool_lines(interaction, session, settings)
                server_route = await repo.resolve_server_route(session, settings, interaction.guild_id)
                lines += await settings_lines(partial(text, interaction), session, interaction.guild_id,
                                              [self.bot.access.capabilities(t) for t in server_route.chain])
                lines += await status_lines(self, interaction, session, DECLARATIONS)
                lines += await control_lines(interaction, session)
            elif interaction.guild_id is None and settings.WEB_SEARCH:  # off, the default, goes unsaid
                unable = await model_that_cannot_search(place(self, session, None))
                lines.append(text(interaction, "commands.status.web_search_default_on") if unable is None
                             else text(interaction, "commands.status.web_search_cannot", model=unable))
        await send(interaction, "\n".join(lines))

    def _route_lines(self, interaction: discord.Interaction, route: ActiveRoute) -> list[str]:
        def say(key: str) -> str:
            return text(interaction, DM_KEYS.get(key, key) if interaction.guild_id is None else key)

        if route.blocked is not None:
            return [say(BLOCKED_KEYS[route.blocked])]
        lines = [say(ROUTE_KEYS[route.origin])]
        lines += [text(interaction, "commands.reply.chain_line", position=i, provider=target.provider,
                       model=target.model) for i, target in enumerate(route.chain, start=1)]
        if route.server_fallback is not None:
            lines.append(say("commands.status.server_fallback"))
            lines += [text(interaction, "commands.reply.chain_line", position=i, provider=target.provider,
                           model=target.model) for i, target in enumerate(route.server_fallback.chain, start=1)]
        return lines

    async def _pool_lines(self, interaction: discord.Interaction, session: AsyncSession,
                          settings: Settings) -> list[str]:
        # Only the server's own keys: the operator's environment keys serve many servers and
        # are none of one server's managers' business (not even masked, not their health).
        keys = await repo.list_server_keys(session, interaction.guild_id, vault=self.bot.vault)
        lines = [text(interaction, "commands.status.pool_header")]
        lines += [health_line(interaction, k.provider, k.label, k.masked, k.health, k.undecryptable) for k in keys]
        if len(lines) == 1:
            lines.append(text(interaction, "commands.reply.keys_empty"))
        return lines


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(AdminCog(bot))
