"""`/model image set provider model`, `/model image clear` and `/model image price`
(Manage Server, in the `/model` group of `bot.cogs.models`): the server's own image
route, drawn on with its keys for that provider, and what it pays per image there. The
reply says when nothing can be drawn on it yet (no key of that provider stored, no custom
endpoint set), so a manager is not surprised later."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.capabilities.images.route_storage import (
    MAX_IMAGE_PRICES,
    SERVER_IMAGE_PROVIDERS,
    ImageTarget,
    clear_image_target,
    image_target_of,
    set_image_price,
    set_image_target,
)
from bot.cogs.base import send, text
from bot.repo.keys import server_key_rows
from bot.repo.servers import get_server_settings
from providers.identity import Provider

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from bot.app import LLMBot

IMAGE_PROVIDER_CHOICES = [app_commands.Choice(name=p.value, value=p.value) for p in SERVER_IMAGE_PROVIDERS]


async def _missing(session: AsyncSession, guild_id: int, target: ImageTarget) -> str | None:
    """The catalog key of what the route still lacks before it can draw, or None."""
    if target.provider == Provider.CUSTOM.value:
        stored = await get_server_settings(session, guild_id)
        return None if stored.base_url else "commands.reply.image_route_no_endpoint"
    keys = await server_key_rows(session, guild_id, target.provider)
    return None if keys else "commands.reply.image_route_no_key"


async def set_image_route(bot: LLMBot, interaction: discord.Interaction, provider: str, model: str) -> None:
    """Store the route (a refused provider or model is the repository's one line)."""
    guild_id = interaction.guild_id
    assert guild_id is not None  # the /model group is guild_only
    async with bot.sessions() as session, session.begin():
        target = await set_image_target(session, guild_id, provider, model)
        missing = await _missing(session, guild_id, target)
    lines = [text(interaction, "commands.reply.image_route_set", provider=target.provider, model=target.model)]
    if missing is not None:
        lines.append(text(interaction, missing, provider=target.provider))
    await send(interaction, "\n".join(lines))


async def clear_image_route(bot: LLMBot, interaction: discord.Interaction) -> None:
    guild_id = interaction.guild_id
    assert guild_id is not None
    async with bot.sessions() as session, session.begin():
        cleared = await clear_image_target(session, guild_id)
    key = "commands.reply.image_route_cleared" if cleared else "commands.reply.image_route_none"
    await send(interaction, text(interaction, key))


async def price_image_route(bot: LLMBot, interaction: discord.Interaction, per_image: float,
                            model: str | None) -> None:
    """Store the price of `model`, by default the model of the server's own route; without
    either, or past `MAX_IMAGE_PRICES` models, one line says why and nothing is stored."""
    guild_id = interaction.guild_id
    assert guild_id is not None
    async with bot.sessions() as session, session.begin():
        if model is None:
            target = await image_target_of(session, guild_id)
            model = target.model if target is not None else None
        stored = model is not None and await set_image_price(session, guild_id, model, per_image)
    if model is None:
        await send(interaction, text(interaction, "commands.reply.image_price_no_route"))
    elif not stored:
        await send(interaction, text(interaction, "commands.reply.image_prices_full", limit=MAX_IMAGE_PRICES))
    else:
        await send(interaction, text(interaction, "commands.reply.image_price_set", model=model.strip(),
                                     price=f"{per_image:g}"))
