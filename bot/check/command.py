"""`/model check` and `/personal check`: one live request per capability of a route.

In order, before any request: the route (`bot.check.route`: a route without a usable key
is one line and nothing is asked), one check per server (or member) per minute
(`bot.check.cooldown`), and, for the server's route, the limits of whoever pays it
(`bot.usage.limits.admit`, as an answer is counted at admission). Then every check at
once (`bot.check.run`), the check's cost counted in usage like an answer's (the same
write-behind path), and the table as one ephemeral reply (`bot.check.reply`). No reply
or log line holds a key: the route is named by its masked tail.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Hashable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord

from bot.check.reply import check_reply, route_title
from bot.check.route import Found, Refused, own_route, server_route
from bot.check.run import CheckReport, check_route
from bot.cogs.base import reply, send, text
from bot.load.config_cache import ConfigSnapshot, read_config
from bot.repo.routes import ServerRoute
from bot.repo.usage import Limits, UsageKey
from bot.turn.credentials import CredentialsUnavailable
from bot.usage.limits import LimitFacts, admit, operator_limits
from bot.usage.record import queue_usage

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)


async def check_server_route(bot: LLMBot, interaction: discord.Interaction) -> None:
    """`/model check` (Manage Server, in a server): the server's route."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    config = await _config(bot, interaction)
    if config is None:
        return
    found = await _found(interaction, server_route(bot.credentials, config, bot.settings.WEB_SEARCH))
    if found is None or not await _may_start(bot, interaction, ("server", interaction.guild_id),
                                             "commands.check.cooldown"):
        return
    if not await _within_limits(bot, interaction, config, found):
        bot.check_cooldown.give_back(("server", interaction.guild_id))
        return
    notes = (text(interaction, "commands.check.not_primary", models=", ".join(found.skipped)),) if found.skipped else ()
    await _run(bot, interaction, config, found, "commands.check.title_server", notes)


async def check_own_route(bot: LLMBot, interaction: discord.Interaction) -> None:
    """`/personal check`: the member's own key and model (their key pays: no limits)."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    config = await _config(bot, interaction)
    if config is None:
        return
    found = await _found(interaction, own_route(bot.credentials, config))
    if found is None or not await _may_start(bot, interaction, ("member", interaction.user.id),
                                             "commands.check.cooldown_personal"):
        return
    await _run(bot, interaction, config, found, "commands.check.title_personal")


async def _config(bot: LLMBot, interaction: discord.Interaction) -> ConfigSnapshot | None:
    """The configuration as a question reads it; None when the database did not answer (said)."""
    config = await read_config(bot.config, interaction.guild_id, interaction.user.id)
    if config.readable:
        return config
    await reply(interaction, "chat.database_busy" if config.state == "busy" else "chat.database_down")
    return None


async def _found(interaction: discord.Interaction, finding: Awaitable[Found | Refused]) -> Found | None:
    """The route to check; None when there is none (its line was sent)."""
    try:
        found = await finding
    except CredentialsUnavailable as exc:
        await reply(interaction, exc.notice)
        return None
    if isinstance(found, Refused):
        await reply(interaction, found.key, **found.params)
        return None
    return found


async def _may_start(bot: LLMBot, interaction: discord.Interaction, scope: Hashable, refusal: str) -> bool:
    """Whether `scope` may check now (counted from now on); else says when it may."""
    left = bot.check_cooldown.take(scope)
    if left <= 0:
        return True
    await reply(interaction, refusal, when=f"<t:{int(time.time() + left) + 1}:R>")
    return False


async def _within_limits(bot: LLMBot, interaction: discord.Interaction, config: ConfigSnapshot,
                         found: Found) -> bool:
    """Count the check where the server (or the operator's default) pays, as an answer is
    counted; False at a limit (the manager told which, and when it resets)."""
    settings, server = bot.settings, config.server
    facts = LimitFacts(interaction.guild_id, interaction.user.id, server.limits if server is not None else Limits(),
                       operator_limits(settings.DEFAULT_MESSAGES_PER_HOUR, settings.DEFAULT_TOKENS_PER_DAY))
    counted = await admit(bot.sessions, facts, found.operator_default)
    if counted.hit is None:
        return True
    await reply(interaction, counted.hit.key, **counted.hit.shown())
    return False


async def _run(bot: LLMBot, interaction: discord.Interaction, config: ConfigSnapshot, found: Found,
               title: str, notes: tuple[str, ...] = ()) -> None:
    route = found.route
    report = await check_route(route, bot.access, bot.settings)
    if report is None:
        await reply(interaction, "commands.check.unusable", provider=route.target.provider.value,
                    model=route.target.model)
        return
    server = config.server
    _count(bot, interaction, report, server.facts.route if server is not None else None)
    locale = interaction.locale.value
    shown = route_title(report, locale, title, operator_key_shown=False)
    await send(interaction, check_reply(report, f"**{shown}**", locale, notes))


def _count(bot: LLMBot, interaction: discord.Interaction, report: CheckReport,
           server_route: ServerRoute | None) -> None:
    """The check's cost in the day's usage, as one answer of this member here."""
    usage = report.usage
    if usage is None:
        return
    route = report.route
    key = UsageKey(interaction.guild_id, interaction.user.id, route.target.provider, route.target.model,
                   route.credential_source, datetime.now(UTC).date())
    queue_usage(bot.writes, key, usage, server_route)
