"""A server's own image route in `server_image_routes`: read into the server's cached
configuration (`bot.load.config_cache.load_server`), written by `/model image set|clear`
through `config_write` so every process drops its cached copy. And what the server pays
per image of a model on that route (`server_image_prices`, `/model image price`), read
only by its `/usage`."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models_images import ServerImagePrice, ServerImageRoute
from bot.repo.common import RepositoryError, ensure_server, insert_for
from bot.repo.servers import check_model, check_provider
from bot.repo.usage import checked_price
from bot.repo.versions import config_write
from providers.identity import Provider

SERVER_IMAGE_PROVIDERS = (Provider.OPENAI, Provider.GOOGLE, Provider.OPENROUTER, Provider.CUSTOM)
# Models a server may price: far more than the image routes one server goes through, and a
# bound on the rows one server's managers can add.
MAX_IMAGE_PRICES = 25


@dataclass(frozen=True)
class ImageTarget:
    """The provider and model a server draws its images on."""

    provider: str
    model: str


async def image_target_of(session: AsyncSession, guild_id: int) -> ImageTarget | None:
    row = await session.get(ServerImageRoute, guild_id)
    return ImageTarget(row.provider, row.model) if row is not None else None


@config_write("server", "guild_id")
async def set_image_target(session: AsyncSession, guild_id: int, provider: str, model: str) -> ImageTarget:
    """Store the server's image route (checked first: a provider images are drawn on, a
    well-formed model name)."""
    named = check_provider(provider.strip().lower())
    if named not in SERVER_IMAGE_PROVIDERS:
        raise RepositoryError("unknown_provider", provider=named.value)
    target = ImageTarget(named.value, check_model(model))
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ServerImageRoute).values(guild_id=guild_id, **target.__dict__)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id"], set_=target.__dict__))
    return target


@config_write("server", "guild_id")
async def clear_image_target(session: AsyncSession, guild_id: int) -> bool:
    """Forget the server's image route; False when it had none."""
    result = await session.execute(delete(ServerImageRoute).where(ServerImageRoute.guild_id == guild_id))
    return bool(result.rowcount)


@config_write("server", "guild_id")
async def set_image_price(session: AsyncSession, guild_id: int, model: str, per_image: float) -> bool:
    """Store what the server pays per image of `model` (checked first: a well-formed name,
    `checked_price`); False, nothing stored, when `MAX_IMAGE_PRICES` other models are priced."""
    model, per_image = check_model(model), checked_price(per_image)
    others = await session.scalar(select(func.count()).select_from(ServerImagePrice).where(
        ServerImagePrice.guild_id == guild_id, ServerImagePrice.model != model))
    if (others or 0) >= MAX_IMAGE_PRICES:
        return False
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ServerImagePrice).values(guild_id=guild_id, model=model, per_image=per_image)
    await session.execute(stmt.on_conflict_do_update(index_elements=["guild_id", "model"],
                                                     set_={"per_image": per_image}))
    return True


async def image_prices_of(session: AsyncSession, guild_id: int) -> dict[str, float]:
    """The server's price per image, by model."""
    rows = await session.execute(select(ServerImagePrice.model, ServerImagePrice.per_image).where(
        ServerImagePrice.guild_id == guild_id))
    return {model: per_image for model, per_image in rows}
