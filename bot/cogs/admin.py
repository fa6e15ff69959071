"""`/settings ...` (Manage Server switches) and `/status` (the route a member's turn takes)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from sqlalchemy.ext.asyncio import AsyncSession

from bot import repo
from bot.capabilities.web_search.answer import search_reach
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
from bot.edge.translator import lstr
from bot.repo import ActiveRoute
from bot.repo.conversation import (
    MAX_BATCH_SECONDS,
    MAX_HISTORY_MESSAGES,
    batch_seconds_allowed,
    history_messages,
    set_batch_seconds,
    set_history_messages,
    set_threads_enabled,
    threads_enabled,
)
from bot.repo.read_links import get_read_links, set_read_links
from bot.repo.routes import keyless_targets
from bot.repo.web_search import MAX_SEARCHES, get_web_search, max_searches_allowed, set_web_search
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

    @settings_group.command(name=lstr("commands.settings.history.name"),
                            description=lstr("commands.settings.history.description"))
    @app_commands.rename(messages=lstr("commands.param.messages.name"))
    @app_commands.describe(messages=lstr("commands.param.messages.description"))
    async def history(self, interaction: discord.Interaction,
                      messages: app_commands.Range[int, 0, MAX_HISTORY_MESSAGES]) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_history_messages(session, interaction.guild_id, messages)
        await reply(interaction, "commands.reply.history_set", count=messages)

    @settings_group.command(name=lstr("commands.settings.threads.name"),
                            description=lstr("commands.settings.threads.description"))
    @app_commands.rename(enabled=lstr("commands.param.enabled.name"))
    @app_commands.describe(enabled=lstr("commands.param.enabled.description"))
    async def threads(self, interaction: discord.Interaction, enabled: bool) -> None:
        async with self.bot.sessions() as session, session.begin():
            await set_threads_enabled(session, interaction.guild_id, enabled)
        await reply(interaction, "commands.reply.threads_on" if enabled else "commands.reply.threads_off")

    @settings_group.command(name=lstr("commands.settings.batch_seconds.name"),
                            description=lstr("commands.settings.batch_seconds.description"))
    @app_commands.rename(seconds=lstr("commands.param.seconds.name"))
    @app_commands.describe(seconds=lstr("commands.param.seconds.description"))
    async def batch_seconds(self, interaction: discord.Interaction,
                            seconds: app_commands.Range[float, 0.0, MAX_BATCH_SECONDS]) -> None:
        """Discord's client keeps the number in range; any other client's value is refused here."""
        if not batch_seconds_allowed(seconds):
            await reply(interaction, "commands.error.batch_out_of_range", limit=f"{MAX_BATCH_SECONDS:g}")
            return
        async with self.bot.sessions() as session, session.begin():
            stored = await set_batch_seconds(session, interaction.guild_id, seconds)
        if stored > 0:
            await reply(interaction, "commands.reply.batch_set", seconds=f"{stored:g}")
        else:
            await reply(interaction, "commands.reply.batch_off")

    @settings_group.command(name=lstr("commands.settings.web_search.name"),
                            description=lstr("commands.settings.web_search.description"))
    @app_commands.rename(enabled=lstr("commands.param.enabled.name"),
                         max_searches=lstr("commands.param.max_searches.name"))
    @app_commands.describe(enabled=lstr("commands.param.enabled.description"),
                           max_searches=lstr("commands.param.max_searches.description"))
    async def web_search(self, interaction: discord.Interaction, enabled: bool,
                         max_searches: app_commands.Range[int, 1, MAX_SEARCHES] | None = None) -> None:
        """Each search costs the server (and shows the model pages of the open web), so it
        is off until turned on and bounded per answer; Discord's client keeps the number
        in range, any other client's value is refused here."""
        if max_searches is not None and not max_searches_allowed(max_searches):
            await reply(interaction, "commands.error.max_searches_out_of_range", limit=MAX_SEARCHES)
            return
        async with self.bot.sessions() as session, session.begin():
            stored = await set_web_search(session, interaction.guild_id, enabled, max_searches)
            unable = await self._model_that_cannot_search(session, interaction.guild_id) if stored.enabled else None
        if not stored.enabled:
            await reply(interaction, "commands.reply.web_search_off")
            return
        lines = [text(interaction, "commands.reply.web_search_on", count=stored.max_searches)]
        if unable is not None:
            lines.append(text(interaction, "commands.reply.web_search_cannot", model=unable))
        await send(interaction, "\n".join(lines))

    async def _model_that_cannot_search(self, session: AsyncSession, guild_id: int | None) -> str | None:
        """The server's first model when it neither searches natively nor has the bot's
        search service to call (SEARCH_BACKEND): with search on, no answer would search."""
        route = await repo.resolve_server_route(session, self.bot.settings, guild_id)
        if not route.chain:
            return None
        first = route.chain[0]
        reach = search_reach(True, self.bot.access.capabilities(first), self.bot.settings.SEARCH_BACKEND is not None)
        return first.model if reach == "none" else None

    @settings_group.command(name=lstr("commands.settings.read_links.name"),
                            description=lstr("commands.settings.read_links.description"))
    @app_commands.rename(enabled=lstr("commands.param.enabled.name"))
    @app_commands.describe(enabled=lstr("commands.param.enabled.description"))
    async def read_links(self, interaction: discord.Interaction, enabled: bool) -> None:
        """On by default: the bot fetches only links a member wrote. A manager may turn it
        off (a server that wants answers from the model alone); the reply says when the
        operator's READ_LINKS keeps it off whatever is stored here."""
        async with self.bot.sessions() as session, session.begin():
            stored = await set_read_links(session, interaction.guild_id, enabled)
        if not stored:
            await reply(interaction, "commands.reply.read_links_off")
        elif self.bot.settings.READ_LINKS:
            await reply(interaction, "commands.reply.read_links_on")
        else:
            await reply(interaction, "commands.reply.read_links_operator_off")

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
                lines += await self._conversation_lines(interaction, session)
                lines += await control_lines(interaction, session)
                lines += await self._web_search_lines(interaction, session)
                lines.append(await self._read_links_line(interaction, session, settings))
            elif interaction.guild_id is None and settings.WEB_SEARCH:  # off, the default, goes unsaid
                unable = await self._model_that_cannot_search(session, None)
                lines.append(text(interaction, "commands.status.web_search_default_on") if unable is None
                             else text(interaction, "commands.status.web_search_cannot", model=unable))
        await send(interaction, "\n".join(lines))

    @staticmethod
    async def _conversation_lines(interaction: discord.Interaction, session: AsyncSession) -> list[str]:
        """The history depth and whether questions get their own thread."""
        threads = await threads_enabled(session, interaction.guild_id)
        return [text(interaction, "commands.status.conversation",
                     count=await history_messages(session, interaction.guild_id),
                     threads=text(interaction, "commands.status.threads_on" if threads
                                  else "commands.status.threads_off"))]

    async def _web_search_lines(self, interaction: discord.Interaction, session: AsyncSession) -> list[str]:
        """Whether answers in this server may search the web, how often per answer, and
        plainly when they cannot though it is on."""
        stored = await get_web_search(session, interaction.guild_id)
        if not stored.enabled:
            return [text(interaction, "commands.status.web_search_off")]
        lines = [text(interaction, "commands.status.web_search_on", count=stored.max_searches)]
        unable = await self._model_that_cannot_search(session, interaction.guild_id)
        if unable is not None:
            lines.append(text(interaction, "commands.status.web_search_cannot", model=unable))
        return lines

    @staticmethod
    async def _read_links_line(interaction: discord.Interaction, session: AsyncSession, settings: Settings) -> str:
        """Whether questions' links are read here; the operator's READ_LINKS off wins."""
        if not settings.READ_LINKS:
            return text(interaction, "commands.status.read_links_operator_off")
        if await get_read_links(session, interaction.guild_id):
            return text(interaction, "commands.status.read_links_on")
        return text(interaction, "commands.status.read_links_off")

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
