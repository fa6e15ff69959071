"""The member's images in `/personal usage`, and the server's in its `/usage`: today and in
the report's period, with what they cost when priced — on the operator's route at
`IMAGE_PRICE`, on the server's own at its `/model image price` (in the server's /usage
only). Nothing when none were drawn."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.images.environment import ImageEnvironment
from bot.capabilities.images.route_storage import image_prices_of
from bot.capabilities.images.storage import images_since, server_images_since


async def image_usage_line(session: AsyncSession, settings: ImageEnvironment, user_id: int, day: date,
                           days: int, say: Callable[..., str]) -> str | None:
    """One line of the member's images (`say`: the caller's localized text), or None. Only
    the images drawn on the operator's route are priced: a server's own route is the
    server's to price."""
    today = await images_since(session, user_id, day)
    period = await images_since(session, user_id, day - timedelta(days=days - 1))
    if not period.images:
        return None
    counts = {"today": today.images, "period": period.images, "days": days}
    if settings.IMAGE_PRICE is None or not period.on_operator:
        return say("commands.reply.personal_usage_images", **counts)
    return say("commands.reply.personal_usage_images_priced", priced=period.on_operator,
               cost=f"{period.on_operator * settings.IMAGE_PRICE:.2f}", **counts)


async def server_image_usage_lines(session: AsyncSession, settings: ImageEnvironment, guild_id: int, day: date,
                                   days: int, say: Callable[..., str]) -> list[str]:
    """The server's images in its `/usage`: one line per route and whose keys drew them,
    today and in the report's period, with their cost when that route is priced. Nothing
    when none."""
    today = await server_images_since(session, guild_id, day)
    period = await server_images_since(session, guild_id, day - timedelta(days=days - 1))
    if not period:
        return []
    server_prices = await image_prices_of(session, guild_id)
    lines = [say("commands.reply.usage_images_header")]
    for (provider, model, source), count in period.items():
        params = {"provider": provider, "model": model, "today": today.get((provider, model, source), 0),
                  "period": count, "days": days}
        keys = say("commands.reply.usage_images_server_keys" if source == "server"
                   else "commands.reply.usage_images_operator_keys")
        price = server_prices.get(model) if source == "server" else settings.IMAGE_PRICE
        if price is not None:
            lines.append(say("commands.reply.usage_images_line_priced", keys=keys, cost=f"{count * price:.2f}",
                             **params))
        else:
            lines.append(say("commands.reply.usage_images_line", keys=keys, **params))
    return lines
