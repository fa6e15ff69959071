"""Each member's images per UTC day (`bot.db.models_images.ImageDay`): taken before an
image is asked for, so two processes can never both draw past the limit, and given back
when the route drew nothing (a refusal, a failure). And the images drawn in each server
per day and route (`ServerImageDay`), counted once an image came, for its `/usage`."""

from __future__ import annotations

from datetime import date
from typing import NamedTuple

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models_images import ImageDay, ServerImageDay
from bot.repo.common import ensure_server, insert_for


class DrawnImages(NamedTuple):
    """A member's images over some days: all of them (the daily limit's count), and those
    drawn on the operator's route (what IMAGE_PRICE prices)."""

    images: int
    on_operator: int


async def take_image(session: AsyncSession, user_id: int, day: date, limit: int | None, *,
                     on_operator: bool) -> bool:
    """Count one image in the member's day (`on_operator`: drawn on the operator's route) if
    that stays within `limit` (None: no limit); False (nothing counted) when the day is full.
    One statement."""
    if limit is not None and limit <= 0:
        return False
    operator = int(on_operator)
    stmt = insert_for(session, ImageDay).values(user_id=user_id, day=day, images=1, operator_images=operator)
    stmt = stmt.on_conflict_do_update(
        index_elements=["user_id", "day"],
        set_={"images": ImageDay.images + 1, "operator_images": ImageDay.operator_images + operator},
        where=ImageDay.images < limit if limit is not None else None,
    ).returning(ImageDay.images)
    return (await session.execute(stmt)).first() is not None


async def give_back_image(session: AsyncSession, user_id: int, day: date, *, on_operator: bool) -> None:
    """Take one counted image out of the member's day again, as `take_image` counted it
    (never below zero)."""
    operator = ImageDay.operator_images
    values = {"images": ImageDay.images - 1}
    if on_operator:
        values["operator_images"] = case((operator > 0, operator - 1), else_=operator)
    await session.execute(update(ImageDay).where(
        ImageDay.user_id == user_id, ImageDay.day == day, ImageDay.images > 0).values(values))


async def images_on(session: AsyncSession, user_id: int, day: date) -> int:
    """Images counted for the member on `day`."""
    count = await session.scalar(select(ImageDay.images).where(ImageDay.user_id == user_id, ImageDay.day == day))
    return int(count or 0)


async def images_since(session: AsyncSession, user_id: int, first_day: date) -> DrawnImages:
    """Images counted for the member from `first_day` on."""
    row = (await session.execute(select(func.sum(ImageDay.images), func.sum(ImageDay.operator_images)).where(
        ImageDay.user_id == user_id, ImageDay.day >= first_day))).one()
    return DrawnImages(int(row[0] or 0), int(row[1] or 0))


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
