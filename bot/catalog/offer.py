"""What the model commands call: the route a command lists with, the autocomplete choices
from the kept list, and the warning for a name the list lacks.

Nothing here waits for a provider: choices come from what `ModelCatalog` keeps now (a
missing or stale list is fetched in the background for a later keystroke), and the
warning is only given where a list is known. A configuration the database cannot read
now offers nothing; the command itself reports the database when it runs.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from functools import partial
from typing import Any

from discord import app_commands
from sqlalchemy.exc import SQLAlchemyError

from bot.catalog.choices import best_matches, is_listed
from bot.catalog.fetch import fetch_models
from bot.catalog.routes import ListRoute, chosen_provider, personal_route, server_route
from bot.load.config_cache import ConfigCache
from bot.turn.access import ProviderAccess
from bot.vault import Vault
from providers.i18n import t

log = logging.getLogger(__name__)


async def server_list_route(config: ConfigCache, vault: Vault, guild_id: int | None,
                            provider: Any) -> ListRoute | None:
    """The route a manager's model command lists with (`provider`: the command's option as
    given); None when there is none or the configuration cannot be read now."""
    chosen = chosen_provider(provider)
    if chosen is None or guild_id is None:
        return None
    try:
        return await server_route(config, vault, guild_id, chosen, datetime.now(UTC))
    except (SQLAlchemyError, OSError) as exc:
        log.debug("no model list route for guild %s: %s", guild_id, type(exc).__name__)
        return None


async def personal_list_route(config: ConfigCache, vault: Vault, user_id: int, guild_id: int | None,
                              provider: Any) -> ListRoute | None:
    """The route a member's own model command lists with (their key for `guild_id`, else
    their global one); None as for `server_list_route`."""
    chosen = chosen_provider(provider)
    if chosen is None:
        return None
    try:
        return await personal_route(config, vault, user_id, guild_id, chosen, datetime.now(UTC))
    except (SQLAlchemyError, OSError) as exc:
        log.debug("no model list route for member %s: %s", user_id, type(exc).__name__)
        return None


def offered(access: ProviderAccess, route: ListRoute | None, typed: str) -> list[app_commands.Choice[str]]:
    """The listed names matching `typed`, best first, from what is kept now."""
    if route is None:
        return []
    models = access.catalog.models(route.key, partial(fetch_models, access, route))
    return [app_commands.Choice(name=name, value=name) for name in best_matches(models, typed)]


def unlisted_lines(access: ProviderAccess, route: ListRoute | None, model: str, locale: Any) -> list[str]:
    """The one-line warning, in `locale`, when the route's list is known and lacks `model`;
    nothing otherwise (the name is stored either way)."""
    known = access.catalog.kept(route.key) if route is not None else None
    if route is None or known is None or is_listed(known, route.provider, model):
        return []
    return [t("commands.reply.model_unlisted", locale)]
