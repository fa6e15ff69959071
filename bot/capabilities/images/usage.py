"""The member's images in `/personal usage`, and the server's in its `/usage`: today and in
the report's period, with what they cost at the operator's `IMAGE_PRICE` when one is set.
Nothing when none were drawn."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.images.environment import ImageEnvironment
from bot.capabilities.images.storage import images_since, server_images_since


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


async def server_image_usage_lines(session: AsyncSession, settings: ImageEnvironment, guild_id: int, day: date,
                                   days: int, say: Callable[..., str]) -> list[str]:
    """The server's images in its `/usage`: one line per route and whose keys drew them,
    today and in the report's period; those on the operator's route with their cost at
    `IMAGE_PRICE` when set (a server's own route has no price here). Nothing when none."""
    today = await server_images_since(session, guild_id, day)
    period = await server_images_since(session, guild_id, day - timedelta(days=days - 1))
    if not period:
        return []
    lines = [say("commands.reply.usage_images_header")]
    for (provider, model, source), count in period.items():
        params = {"provider": provider, "model": model, "today": today.get((provider, model, source), 0),
                  "period": count, "days": days}
        keys = say("commands.reply.usage_images_server_keys" if source == "server"
                   else "commands.reply.usage_images_operator_keys")
        if source == "operator" and settings.IMAGE_PRICE is not None:
            lines.append(say("commands.reply.usage_images_line_priced", keys=keys,
                             cost=f"{count * settings.IMAGE_PRICE:.2f}", **params))
        else:
            lines.append(say("commands.reply.usage_images_line", keys=keys, **params))
    return lines
