"""Which credentials and models one turn uses: the member's own (BYOK), the server's, or
the operator's environment default when the server stored nothing.

The operator's DEFAULT_TEXT_API_KEYS pay for one thing only: the operator's own provider,
model and address, on a server with no provider configuration at all. A server that
picked a model, stored a key or set fallbacks runs on its own keys; otherwise any server
could spend the operator's budget on any model, or send the operator's key to a public
host instead of the operator's gateway.

A custom endpoint may need no key (a local server): a server whose managers set a custom
endpoint and stored no custom key sends its requests there without one, and so does the
operator's custom default when DEFAULT_TEXT_API_KEYS is empty. Keyless is only ever the
address a manager (or the operator) set: a custom model on another address, or any
other provider, still needs a key, and a server that stored custom keys never falls
back to sending none when they rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import ModelFallback, ServerApiKey
from bot.repo.keys import (
    KEYLESS_LEASE,
    KeyLease,
    KeyPool,
    usable_environment_keys,
    usable_server_keys,
)
from bot.repo.personal import PersonalInfo, effective_personal
from bot.repo.servers import ModelTarget, ServerSettings, get_server_settings, list_fallbacks
from bot.settings import Settings
from bot.vault import Vault
from providers.identity import Provider

Origin = Literal["personal", "server", "environment", "none"]


@dataclass(frozen=True)
class ServerRoute:
    """The server's model chain: primary (stored or environment default) then fallbacks."""

    origin: Origin
    chain: tuple[ModelTarget, ...]


@dataclass(frozen=True)
class ActiveRoute:
    """The route for one member's turn. `blocked` names why no turn can run
    ("member_key_required", "no_route", or "server_keys_required": the server chose its
    own model but stored no key for any model of its chain); `server_fallback` is set only
    on a personal route whose owner allows it on a server that does not require member keys."""

    credential_source: Literal["personal", "server"] | None
    origin: Origin
    chain: tuple[ModelTarget, ...]
    personal: PersonalInfo | None = None
    server_fallback: ServerRoute | None = None
    blocked: str | None = None


def environment_target(settings: Settings) -> ModelTarget | None:
    """The operator's default, always with its address (a gateway is not only for custom),
    marked as the operator's own address (trusted to be private; see `ModelTarget`)."""
    if settings.DEFAULT_TEXT_PROVIDER and settings.DEFAULT_TEXT_MODEL:
        return ModelTarget(settings.DEFAULT_TEXT_PROVIDER, settings.DEFAULT_TEXT_MODEL,
                           settings.DEFAULT_TEXT_BASE_URL, operator_address=True)
    return None


_environment_target = environment_target


def _with_base_url(target: ModelTarget, stored: ServerSettings | None) -> ModelTarget:
    # Only the custom provider takes a server-chosen address; the others use their own.
    if target.provider is Provider.CUSTOM and stored is not None and stored.base_url:
        return ModelTarget(target.provider, target.model, stored.base_url)
    return target


async def _key_providers(session: AsyncSession, guild_id: int | None) -> set[str]:
    """Providers the server stored at least one key for."""
    if guild_id is None:
        return set()
    return set(await session.scalars(
        select(ServerApiKey.provider).where(ServerApiKey.guild_id == guild_id).distinct()))


def _keyless_on_server(target: ModelTarget, stored: ServerSettings | None, paid: set[str]) -> bool:
    """A custom model on the address the server's managers set, on a server with no custom key."""
    return (target.provider is Provider.CUSTOM and Provider.CUSTOM not in paid and stored is not None
            and bool(stored.base_url) and target.base_url == stored.base_url)


def _keyless_default(target: ModelTarget, settings: Settings) -> bool:
    """The operator's custom default with no DEFAULT_TEXT_API_KEYS at all."""
    return (target.provider is Provider.CUSTOM and bool(target.base_url) and target == _environment_target(settings)
            and not settings.default_text_api_keys())


async def keyless_targets(session: AsyncSession, settings: Settings, guild_id: int | None,
                          route: ActiveRoute) -> list[ModelTarget]:
    """The models of `route` (and of its server fallback) that are sent without a key."""
    chains = [(route.origin, route.chain)]
    if route.server_fallback is not None:
        chains.append((route.server_fallback.origin, route.server_fallback.chain))
    stored = await get_server_settings(session, guild_id) if guild_id is not None else None
    paid = await _key_providers(session, guild_id)
    found: list[ModelTarget] = []
    for origin, chain in chains:
        for target in chain:
            if ((origin == "environment" and _keyless_default(target, settings))
                    or (origin == "server" and _keyless_on_server(target, stored, paid))):
                found.append(target)
    return found


@dataclass(frozen=True)
class ServerFacts:
    """What route decisions read of one server (or of a DM: `guild_id` None): its stored
    settings, the providers it stored keys for, whether it configured nothing at all, and
    its model chain. Read at once by `server_facts`; kept by `bot.load.config_cache`."""

    guild_id: int | None
    stored: ServerSettings | None
    paid: frozenset[str]
    unconfigured: bool
    route: ServerRoute


async def _unconfigured(session: AsyncSession, guild_id: int | None,
                        stored: ServerSettings | None = None) -> bool:
    """No stored provider or model, no stored keys, no fallbacks: only such a server (or a
    DM) runs on the operator's environment default."""
    if guild_id is None:
        return True
    stored = stored or await get_server_settings(session, guild_id)
    if stored.provider or stored.model or await _key_providers(session, guild_id):
        return False
    fallback = await session.scalar(select(ModelFallback.id).where(ModelFallback.guild_id == guild_id).limit(1))
    return fallback is None


async def _server_route(session: AsyncSession, settings: Settings, guild_id: int | None,
                        stored: ServerSettings | None, unconfigured: bool) -> ServerRoute:
    if unconfigured:
        env = _environment_target(settings)
        return ServerRoute("environment", (env,)) if env is not None else ServerRoute("none", ())
    assert guild_id is not None and stored is not None  # a DM is always unconfigured
    chain: list[ModelTarget] = []
    if stored.provider and stored.model:
        chain.append(_with_base_url(ModelTarget(stored.provider, stored.model), stored))
    for target in await list_fallbacks(session, guild_id):
        target = _with_base_url(target, stored)
        if target not in chain:
            chain.append(target)
    return ServerRoute("server" if chain else "none", tuple(chain))


async def server_facts(session: AsyncSession, settings: Settings, guild_id: int | None) -> ServerFacts:
    stored = await get_server_settings(session, guild_id) if guild_id is not None else None
    unconfigured = await _unconfigured(session, guild_id, stored)
    paid = frozenset(await _key_providers(session, guild_id))
    route = await _server_route(session, settings, guild_id, stored, unconfigured)
    return ServerFacts(guild_id, stored, paid, unconfigured, route)


async def resolve_server_route(session: AsyncSession, settings: Settings, guild_id: int | None) -> ServerRoute:
    return (await server_facts(session, settings, guild_id)).route


def active_route_of(facts: ServerFacts, personal: PersonalInfo | None) -> ActiveRoute:
    """The route of one member's turn from what was read (pure: see the module docstring)."""
    server_route = facts.route
    required = facts.stored is not None and facts.stored.member_keys_required
    in_dm = facts.guild_id is None  # no server's route to override: a complete own route answers
    if personal is not None and personal.complete and (personal.override_enabled or required or in_dm):
        allowed = personal.server_fallback_allowed and not required and bool(server_route.chain)
        target = ModelTarget(personal.provider, personal.model)  # type: ignore[arg-type]
        return ActiveRoute("personal", "personal", (target,), personal,
                           server_route if allowed else None)
    if required:
        return ActiveRoute(None, "none", (), personal, blocked="member_key_required")
    if not server_route.chain:
        return ActiveRoute(None, "none", (), personal, blocked=_missing_step(personal) if in_dm else "no_route")
    if server_route.origin == "server" and not any(
            target.provider in facts.paid or _keyless_on_server(target, facts.stored, set(facts.paid))
            for target in server_route.chain):
        return ActiveRoute(None, "none", (), personal, blocked="server_keys_required")
    return ActiveRoute("server", server_route.origin, server_route.chain, personal)


def _missing_step(personal: PersonalInfo | None) -> str:
    """What a DM without any route lacks, named as the member's next step: a model for
    their key, a key for their model, or (nothing of their own) a route at all."""
    if personal is not None and personal.masked_key and not (personal.provider and personal.model):
        return "personal_model_missing"
    if personal is not None and personal.provider and personal.model and not personal.masked_key:
        return "personal_key_missing"
    return "no_route"


async def resolve_active_route(
    session: AsyncSession, settings: Settings, guild_id: int | None, user_id: int,
) -> ActiveRoute:
    facts = await server_facts(session, settings, guild_id)
    return active_route_of(facts, await effective_personal(session, user_id, guild_id))


@dataclass(frozen=True)
class PoolSource:
    """Where one target's keys come from: the server's pool of a provider, the
    operator's environment keys, the keyless lease, or nothing (`configured` says
    whether any key is configured at all)."""

    kind: Literal["server", "environment", "keyless", "none"]
    configured: bool = True


def pool_source(facts: ServerFacts, settings: Settings, target: ModelTarget) -> PoolSource:
    """The server's pool for the provider; the operator's environment keys only for
    exactly the operator's target on a server with no provider configuration; the
    keyless lease for a keyless custom endpoint (see the module docstring)."""
    if facts.guild_id is not None and target.provider in facts.paid:
        return PoolSource("server")
    if not facts.unconfigured:
        keyless = _keyless_on_server(target, facts.stored, set(facts.paid))
        return PoolSource("keyless") if keyless else PoolSource("none", configured=False)
    if target != _environment_target(settings):
        return PoolSource("none", configured=False)
    if _keyless_default(target, settings):
        return PoolSource("keyless")
    return PoolSource("environment")


async def server_key_pool(
    session: AsyncSession, vault: Vault, settings: Settings, guild_id: int | None,
    target: ModelTarget, now: datetime,
) -> list[KeyLease]:
    """Usable keys for one target of a server route (`pool_source` says which). An empty
    pool says whether any key is configured at all."""
    facts = await server_facts(session, settings, guild_id)
    source = pool_source(facts, settings, target)
    if source.kind == "server":
        assert guild_id is not None
        return await usable_server_keys(session, vault, guild_id, target.provider, now)
    if source.kind == "environment":
        return await usable_environment_keys(session, settings.default_text_api_keys(), now)
    return KeyPool([KEYLESS_LEASE]) if source.kind == "keyless" else KeyPool(configured=source.configured)
