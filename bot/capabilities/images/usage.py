"""The member's images in `/personal usage`: today and in the report's period, with what
they cost at the operator's `IMAGE_PRICE` when one is set. Nothing when they drew none."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.images.environment import ImageEnvironment
from bot.capabilities.images.storage import images_since


async def image_usage_line(session: AsyncSession, settings: ImageEnvironment, user_id: int, day: date,
                           days: int, say: Callable[..., str]) -> str | None:
    """One line of the member's images (`say`: the caller's localized text), or None."""
    today = await images_since(session, user_id, day)
    period = await images_since(session, user_id, day - timedelta(days=days - 1))
    if not period:
        return None
    if settings.IMAGE_PRICE is None:
        return say("commands.reply.personal_usage_images", today=today, period=period, days=days)
    return say("commands.reply.personal_usage_images_priced", today=today, period=period, days=days,
               cost=f"{period * settings.IMAGE_PRICE:.2f}")
