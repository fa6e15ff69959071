"""Which credentials and models one turn uses: the member's own (BYOK), the server's, or
the operator's environment default when the server stored nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import ServerApiKey
from bot.repo.keys import KeyLease, usable_environment_keys, usable_server_keys
from bot.repo.personal import PersonalInfo, effective_personal
from bot.repo.servers import ModelTarget, ServerSettings, get_server_settings, list_fallbacks
from bot.settings import Settings
from bot.vault import Vault

Origin = Literal["personal", "server", "environment", "none"]


@dataclass(frozen=True)
class ServerRoute:
    """The server's model chain: primary (stored or environment default) then fallbacks."""

    origin: Origin
    chain: tuple[ModelTarget, ...]


@dataclass(frozen=True)
class ActiveRoute:
    """The route for one member's turn. `blocked` names why no turn can run
    ("member_key_required", "no_route"); `server_fallback` is set only on a personal
    route whose owner allows it on a server that does not require member keys."""

    credential_source: Literal["personal", "server"] | None
    origin: Origin
    chain: tuple[ModelTarget, ...]
    personal: PersonalInfo | None = None
    server_fallback: ServerRoute | None = None
    blocked: str | None = None


def _environment_target(settings: Settings) -> ModelTarget | None:
    if settings.DEFAULT_TEXT_PROVIDER and settings.DEFAULT_TEXT_MODEL:
        return ModelTarget(settings.DEFAULT_TEXT_PROVIDER, settings.DEFAULT_TEXT_MODEL,
                           settings.DEFAULT_TEXT_BASE_URL)
    return None


def _with_base_url(target: ModelTarget, stored: ServerSettings | None) -> ModelTarget:
    # Only the custom provider takes a server-chosen address; the others use their own.
    if target.provider == "custom" and stored is not None and stored.base_url:
        return ModelTarget(target.provider, target.model, stored.base_url)
    return target


async def resolve_server_route(session: AsyncSession, settings: Settings, guild_id: int | None) -> ServerRoute:
    stored = await get_server_settings(session, guild_id) if guild_id is not None else None
    fallbacks = await list_fallbacks(session, guild_id) if guild_id is not None else []
    chain: list[ModelTarget] = []
    origin: Origin = "none"
    if stored is not None and stored.provider and stored.model:
        chain.append(_with_base_url(ModelTarget(stored.provider, stored.model), stored))
        origin = "server"
    elif (env := _environment_target(settings)) is not None:
        chain.append(env)
        origin = "environment"
    for target in fallbacks:
        target = _with_base_url(target, stored)
        if target not in chain:
            chain.append(target)
    if origin == "none" and chain:
        origin = "server"
    return ServerRoute(origin, tuple(chain))


async def resolve_active_route(
    session: AsyncSession, settings: Settings, guild_id: int | None, user_id: int,
) -> ActiveRoute:
    server_route = await resolve_server_route(session, settings, guild_id)
    required = False
    if guild_id is not None:
        required = (await get_server_settings(session, guild_id)).member_keys_required
    personal = await effective_personal(session, user_id, guild_id)
    if personal is not None and personal.complete and (personal.override_enabled or required):
        allowed = personal.server_fallback_allowed and not required and bool(server_route.chain)
        target = ModelTarget(personal.provider, personal.model)  # type: ignore[arg-type]
        return ActiveRoute("personal", "personal", (target,), personal,
                           server_route if allowed else None)
    if required:
        return ActiveRoute(None, "none", (), personal, blocked="member_key_required")
    if not server_route.chain:
        return ActiveRoute(None, "none", (), personal, blocked="no_route")
    return ActiveRoute("server", server_route.origin, server_route.chain, personal)


async def server_key_pool(
    session: AsyncSession, vault: Vault, settings: Settings, guild_id: int | None,
    target: ModelTarget, now: datetime,
) -> list[KeyLease]:
    """Usable keys for one target of a server route: the server's pool for the provider;
    the operator's environment keys when the server stored none for that provider and
    the target is the environment's provider (and, for custom, the same address)."""
    stored = 0
    if guild_id is not None:
        stored = await session.scalar(select(func.count()).select_from(ServerApiKey).where(
            ServerApiKey.guild_id == guild_id, ServerApiKey.provider == target.provider)) or 0
    if stored:
        return await usable_server_keys(session, vault, guild_id, target.provider, now)  # type: ignore[arg-type]
    env = _environment_target(settings)
    if env is None or env.provider != target.provider:
        return []
    if target.provider == "custom" and target.base_url != env.base_url:
        return []
    return await usable_environment_keys(session, settings.default_text_api_keys(), now)
