"""Which route a check asks, found as a turn finds it, or the one line saying why none.

The server's check takes the server's route as a turn of a member without a key of
their own would (`Credentials.route`): its first model that has a usable key, and the key
a turn would use first (`Credentials.pool`, least recently used, resting keys left out).
A member's check takes their own key and model, whether or not their override is on.
The operator's terminal check is the server's check on `EnvironmentCredentials`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from bot.check.run import CheckRoute
from bot.load.config_cache import NO_PERSONAL, ConfigSnapshot
from bot.repo import ModelTarget
from bot.turn.attempts import target_label
from bot.turn.credentials import Credentials, Leg

BLOCKED_KEYS = {
    "no_route": "commands.check.no_route",
    "member_key_required": "commands.check.member_keys_required",
    "server_keys_required": "commands.check.server_keys_required",
}


@dataclass(frozen=True)
class Refused:
    """No check runs: the catalog key of the one line that says why, and its values."""

    key: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Found:
    """The route to check, and a line to show above its rows when the model checked is
    not the route's first (`skipped`: the models before it, which have no usable key)."""

    route: CheckRoute
    skipped: tuple[str, ...] = ()
    operator_default: bool = False  # the operator's default answers here (its own limits count)


async def server_route(credentials: Credentials, config: ConfigSnapshot, operator_search: bool) -> Found | Refused:
    """The server's route (or the operator's default where it answers). `operator_search`:
    the operator's WEB_SEARCH, which turns search on for the operator's default route."""
    route = credentials.route(dataclasses.replace(config, personal=NO_PERSONAL))
    if route.blocked is not None or not route.legs:
        return Refused(BLOCKED_KEYS.get(route.blocked or "no_route", "commands.check.no_route"))
    leg = route.legs[0]
    server = config.server
    search = bool(server is not None and server.web_search) or (route.operator_default and operator_search)
    configured = False
    for index, target in enumerate(leg.chain):
        pool = await credentials.pool(config, leg, target)
        configured |= bool(pool) or getattr(pool, "configured", True)
        if pool:
            chosen = CheckRoute(target, pool[0], "server", route.verbatim_tool_calling,
                                tuple(target_label(t) for t in leg.chain[index + 1:]), search)
            return Found(chosen, tuple(target_label(t) for t in leg.chain[:index]), route.operator_default)
    primary = leg.chain[0]
    key = "commands.check.keys_resting" if configured else "commands.check.no_key"
    return Refused(key, {"provider": primary.provider.value})


async def own_route(credentials: Credentials, config: ConfigSnapshot) -> Found | Refused:
    """The member's own key and model here (this server's entry, else their global one)."""
    info = config.personal.info
    if info is None or not info.complete:
        return Refused("commands.check.personal_incomplete")
    target = ModelTarget(info.provider, info.model)  # type: ignore[arg-type]
    pool = await credentials.pool(config, Leg("personal", (target,), info), target)
    if not pool:
        return Refused("commands.check.personal_key_resting")
    server = config.server
    return Found(CheckRoute(target, pool[0], "personal", web_search=bool(server is not None and server.web_search)))
