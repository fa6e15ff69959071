"""Asking a provider for its list on one route, as the bot's answers reach it: the same
address policy (the operator's own address may be private) and the shared HTTP clients."""

from __future__ import annotations

from bot.catalog.routes import ListRoute
from bot.turn.access import ProviderAccess
from providers.listing import list_models
from providers.model_list import ListedModel


async def fetch_models(access: ProviderAccess, route: ListRoute) -> tuple[ListedModel, ...]:
    """The models `route`'s provider lists for its key; raises ModelListFailed (or
    ValueError for a route that cannot be built)."""
    return await list_models(route.provider, api_key=route.secret, base_url=route.base_url,
                             endpoint_policy=access.policy_at(route.operator_address), clients=access.clients)
