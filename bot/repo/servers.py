"""Server configuration: text route, capabilities, thought log, BYOK mode, fallback chain.

Rows are created with INSERT ... ON CONFLICT DO NOTHING and the fallback chain is changed
under the server's row lock, so shard processes writing at the same moment neither crash
on a unique constraint nor store one model twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import ModelFallback, Server, ServerCapabilities, ServerTextConfig
from bot.repo.common import (
    RepositoryError,
    conflicts_as,
    ensure_server,
    insert_for,
    lock_server,
    printable,
    refuse_control,
)
from bot.repo.versions import config_write
from providers import Provider, provider_of

MAX_MODEL_LENGTH = 200
MAX_FALLBACKS = 10


@dataclass(frozen=True)
class ModelTarget:
    """One model to try: provider, model name and (custom provider only) a base URL.

    `operator_address` marks the operator's own default (DEFAULT_TEXT_BASE_URL): the
    operator wrote that address, so it may be loopback or private without
    ALLOW_PRIVATE_ENDPOINTS (metadata and credential addresses stay refused). An address
    a server's managers set never carries it. It takes no part in equality: the same
    model at the same address is the same target.
    """

    provider: Provider
    model: str
    base_url: str | None = None
    operator_address: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        # A stored or typed name becomes the typed identity once, here (frozen: set once).
        object.__setattr__(self, "provider", provider_of(self.provider))


@dataclass(frozen=True)
class ServerSettings:
    """Everything a server stored; None/False where it stored nothing."""

    guild_id: int
    provider: str | None
    model: str | None
    base_url: str | None
    thought_log_channel_id: int | None
    member_keys_required: bool
    verbatim_tool_calling_enabled: bool


def check_provider(provider: str) -> Provider:
    """The typed identity of a typed name; a refusal naming it otherwise."""
    try:
        return provider_of(provider)
    except ValueError:
        raise RepositoryError("unknown_provider", provider=printable(provider[:40])) from None


def check_model(model: str) -> str:
    value = refuse_control(model.strip())
    if not value or len(value) > MAX_MODEL_LENGTH or any(c.isspace() for c in value):
        raise RepositoryError("bad_model")
    return value


def check_base_url(base_url: str) -> str:
    """The address (scheme, host, length) was checked by the caller; this refuses what
    the database could not store."""
    return refuse_control(base_url.strip())


async def get_server_settings(session: AsyncSession, guild_id: int) -> ServerSettings:
    server = await session.get(Server, guild_id)
    text = await session.get(ServerTextConfig, guild_id)
    caps = await session.get(ServerCapabilities, guild_id)
    return ServerSettings(
        guild_id=guild_id,
        provider=text.provider if text else None,
        model=text.model if text else None,
        base_url=text.base_url if text else None,
        thought_log_channel_id=server.thought_log_channel_id if server else None,
        member_keys_required=bool(server and server.member_keys_required),
        verbatim_tool_calling_enabled=bool(caps and caps.verbatim_tool_calling_enabled),
    )


async def _one_row_per_server(session: AsyncSession, model, guild_id: int):
    """The server's row of a one-row-per-server table, created if missing; when another
    process creates it at the same moment, that row is used."""
    await ensure_server(session, guild_id)
    row = await session.get(model, guild_id)
    if row is None:
        stmt = insert_for(session, model).values(guild_id=guild_id)
        await session.execute(stmt.on_conflict_do_nothing(index_elements=["guild_id"]))
        row = await session.get(model, guild_id, populate_existing=True)
    return row


async def _text_config(session: AsyncSession, guild_id: int) -> ServerTextConfig:
    return await _one_row_per_server(session, ServerTextConfig, guild_id)


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def set_text_model(session: AsyncSession, guild_id: int, provider: str, model: str) -> ModelTarget:
    """The primary route. A base URL is kept but only used while the provider is custom."""
    target = ModelTarget(check_provider(provider), check_model(model))
    row = await _text_config(session, guild_id)
    custom = target.provider is Provider.CUSTOM
    if custom and not row.base_url:
        raise RepositoryError("endpoint_required")  # custom has no address of its own
    row.provider, row.model = target.provider.value, target.model
    await session.flush()
    return ModelTarget(target.provider, target.model, row.base_url if custom else None)


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def set_custom_endpoint(session: AsyncSession, guild_id: int, base_url: str, model: str | None) -> ModelTarget:
    """Switch the server to the custom provider at `base_url` (already address-checked)."""
    base_url = check_base_url(base_url)
    model = check_model(model) if model is not None else None
    row = await _text_config(session, guild_id)
    chosen = model if model is not None else row.model
    if chosen is None:
        raise RepositoryError("model_required")
    row.provider, row.model, row.base_url = Provider.CUSTOM.value, chosen, base_url
    await session.flush()
    return ModelTarget(Provider.CUSTOM, chosen, base_url)


async def _server(session: AsyncSession, guild_id: int) -> Server:
    await ensure_server(session, guild_id)
    server = await session.get(Server, guild_id, populate_existing=True)
    assert server is not None  # ensure_server just made it
    return server


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def set_thought_log_channel(session: AsyncSession, guild_id: int, channel_id: int | None) -> None:
    (await _server(session, guild_id)).thought_log_channel_id = channel_id
    await session.flush()


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def set_member_keys_required(session: AsyncSession, guild_id: int, required: bool) -> None:
    (await _server(session, guild_id)).member_keys_required = required
    await session.flush()


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def set_verbatim_tool_calling(session: AsyncSession, guild_id: int, enabled: bool) -> None:
    row = await _one_row_per_server(session, ServerCapabilities, guild_id)
    row.verbatim_tool_calling_enabled = enabled
    await session.flush()


async def list_fallbacks(session: AsyncSession, guild_id: int) -> list[ModelTarget]:
    rows = await session.scalars(
        select(ModelFallback).where(ModelFallback.guild_id == guild_id).order_by(ModelFallback.position)
    )
    return [ModelTarget(row.provider, row.model) for row in rows]


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def add_fallback(session: AsyncSession, guild_id: int, provider: str, model: str) -> int:
    """Append to the chain; returns the 1-based position shown to the manager."""
    target = ModelTarget(check_provider(provider), check_model(model))
    await lock_server(session, guild_id)
    if target.provider is Provider.CUSTOM:
        text_config = await session.get(ServerTextConfig, guild_id)
        if text_config is None or not text_config.base_url:
            raise RepositoryError("endpoint_required")
    chain = await list_fallbacks(session, guild_id)
    if target in chain:
        raise RepositoryError("fallback_duplicate")
    if len(chain) >= MAX_FALLBACKS:
        raise RepositoryError("fallback_full", limit=MAX_FALLBACKS)
    top = await session.scalar(
        select(func.max(ModelFallback.position)).where(ModelFallback.guild_id == guild_id)
    )
    stmt = insert_for(session, ModelFallback).values(
        guild_id=guild_id, position=(top or 0) + 1, provider=target.provider, model=target.model,
    )
    if await session.scalar(stmt.on_conflict_do_nothing().returning(ModelFallback.id)) is None:
        # Only reachable if the lock above was bypassed: the database kept its invariant.
        again = await list_fallbacks(session, guild_id)
        raise RepositoryError("fallback_duplicate" if target in again else "conflict")
    return len(chain) + 1


@conflicts_as("conflict")
@config_write("server", "guild_id")
async def remove_fallback(session: AsyncSession, guild_id: int, position: int) -> ModelTarget | None:
    """Remove the entry at a 1-based position and close the gap (row by row, ascending,
    so the unique (guild, position) constraint holds after every statement)."""
    await lock_server(session, guild_id)
    rows = list(await session.scalars(
        select(ModelFallback).where(ModelFallback.guild_id == guild_id).order_by(ModelFallback.position)
    ))
    if not 1 <= position <= len(rows):
        return None
    gone = rows[position - 1]
    await session.execute(delete(ModelFallback).where(ModelFallback.id == gone.id))
    await session.flush()
    for index, row in enumerate(rows[position:], start=position):
        row.position = index
        await session.flush()
    return ModelTarget(gone.provider, gone.model)
