"""Each member's images per UTC day (`bot.db.models_images.ImageDay`): taken before an
image is asked for, so two processes can never both draw past the limit, and given back
when the route drew nothing (a refusal, a failure). And the images drawn in each server
per day and route (`ServerImageDay`), counted once an image came, for its `/usage`."""

from __future__ import annotations

from datetime import date

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models_images import ImageDay, ServerImageDay
from bot.repo.common import ensure_server, insert_for


async def take_image(session: AsyncSession, user_id: int, day: date, limit: int | None) -> bool:
    """Count one image in the member's day if that stays within `limit` (None: no limit);
    False (nothing counted) when the day is full. One statement."""
    if limit is not None and limit <= 0:
        return False
    stmt = insert_for(session, ImageDay).values(user_id=user_id, day=day, images=1)
    stmt = stmt.on_conflict_do_update(
        index_elements=["user_id", "day"], set_={"images": ImageDay.images + 1},
        where=ImageDay.images < limit if limit is not None else None,
    ).returning(ImageDay.images)
    return (await session.execute(stmt)).first() is not None


async def give_back_image(session: AsyncSession, user_id: int, day: date) -> None:
    """Take one counted image out of the member's day again (never below zero)."""
    await session.execute(update(ImageDay).where(
        ImageDay.user_id == user_id, ImageDay.day == day, ImageDay.images > 0).values(images=ImageDay.images - 1))


async def images_on(session: AsyncSession, user_id: int, day: date) -> int:
    """Images counted for the member on `day`."""
    count = await session.scalar(select(ImageDay.images).where(ImageDay.user_id == user_id, ImageDay.day == day))
    return int(count or 0)


async def images_since(session: AsyncSession, user_id: int, first_day: date) -> int:
    """Images counted for the member from `first_day` on."""
    count = await session.scalar(select(func.sum(ImageDay.images)).where(
        ImageDay.user_id == user_id, ImageDay.day >= first_day))
    return int(count or 0)


async def count_server_image(session: AsyncSession, guild_id: int, day: date, route: tuple[str, str, str]) -> None:
    """One image drawn in the server on `day` on `route` (provider, model, source). One upsert."""
    provider, model, source = route
    await ensure_server(session, guild_id)
    stmt = insert_for(session, ServerImageDay).values(guild_id=guild_id, day=day, provider=provider, model=model,
                                                      source=source, images=1)
    await session.execute(stmt.on_conflict_do_update(
        index_elements=["guild_id", "day", "provider", "model", "source"],
        set_={"images": ServerImageDay.images + 1}))


async def server_images_since(session: AsyncSession, guild_id: int,
                              first_day: date) -> dict[tuple[str, str, str], int]:
    """Images drawn in the server from `first_day` on, by route (provider, model, source)."""
    rows = await session.execute(select(
        ServerImageDay.provider, ServerImageDay.model, ServerImageDay.source, func.sum(ServerImageDay.images),
    ).where(ServerImageDay.guild_id == guild_id, ServerImageDay.day >= first_day).group_by(
        ServerImageDay.provider, ServerImageDay.model, ServerImageDay.source).order_by(
        ServerImageDay.provider, ServerImageDay.model, ServerImageDay.source))
    return {(provider, model, source): int(count) for provider, model, source, count in rows}
