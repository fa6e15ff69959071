"""`/model set|endpoint|check`, `/model fallback add|remove|list` and `/model image set|clear|price`
(Manage Server; the image route's commands live in `bot.capabilities.images.route_commands`)."""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot import repo
from bot.capabilities.images.route_commands import (
    IMAGE_PROVIDER_CHOICES,
    clear_image_route,
    price_image_route,
    set_image_route,
)
from bot.catalog.offer import offered, server_list_route, unlisted_lines
from bot.check.command import check_server_route
from bot.cogs.base import (
    MANAGE_SERVER,
    PROVIDER_CHOICES,
    ConfigCog,
    ManagerGroup,
    is_manager,
    reply,
    send,
    text,
)
from bot.cogs.endpoint import shown_url, validated_endpoint
from bot.edge.translator import localized, lstr, named
from bot.repo.params import set_params
from bot.repo.usage import MAX_PRICE, set_price
from bot.usage.report import params_lines, unsent_lines

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)

REASONING_CHOICES = [
    app_commands.Choice(name=lstr("commands.choice.reasoning_off"), value="off"),
    app_commands.Choice(name=lstr("commands.choice.reasoning_low"), value="low"),
    app_commands.Choice(name=lstr("commands.choice.reasoning_medium"), value="medium"),
    app_commands.Choice(name=lstr("commands.choice.reasoning_high"), value="high"),
]


class ModelsCog(ConfigCog):
    model = ManagerGroup(
        **named("commands.model"),
        guild_only=True, default_permissions=MANAGE_SERVER,
    )
    fallback = ManagerGroup(
        **named("commands.model.fallback"),
        parent=model,
    )
    image = ManagerGroup(
        **named("commands.model.image"),
        parent=model,
    )

    @localized(model.command, "commands.model.set")
    @app_commands.choices(provider=PROVIDER_CHOICES)
    async def set_model(self, interaction: discord.Interaction, provider: str, model: str) -> None:
        async with self.bot.sessions() as session, session.begin():
            target = await repo.set_text_model(session, interaction.guild_id, provider, model)
        said = text(interaction, "commands.reply.model_set", provider=target.provider, model=target.model)
        await send(interaction, "\n".join([said, *await self._unlisted(interaction, provider, target.model)]))

    @localized(model.command, "commands.model.endpoint")
    async def endpoint(self, interaction: discord.Interaction, base_url: str, model: str | None = None) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)  # the address check resolves DNS
        url, refusal = await validated_endpoint(base_url, self.bot.settings.ALLOW_PRIVATE_ENDPOINTS)
        if refusal is not None:
            await send(interaction, text(interaction, refusal, url=shown_url(base_url)))
            return
        async with self.bot.sessions() as session, session.begin():
            target = await repo.set_custom_endpoint(session, interaction.guild_id, url, model)
        await reply(interaction, "commands.reply.endpoint_set", base_url=target.base_url, model=target.model)

    @localized(fallback.command, "commands.model.fallback.add")
    @app_commands.choices(provider=PROVIDER_CHOICES)
    async def fallback_add(self, interaction: discord.Interaction, provider: str, model: str) -> None:
        async with self.bot.sessions() as session, session.begin():
            position = await repo.add_fallback(session, interaction.guild_id, provider, model)
        said = text(interaction, "commands.reply.fallback_added", position=position,
                    provider=provider.strip().lower(), model=model.strip())
        await send(interaction, "\n".join([said, *await self._unlisted(interaction, provider, model)]))

    @fallback_add.autocomplete("model")
    @set_model.autocomplete("model")
    async def model_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """The chosen provider's own model names, listed with the server's key, for managers
        only (discord.py runs no interaction_check before an autocomplete)."""
        if not is_manager(interaction):
            return []
        route = await server_list_route(self.bot.config, self.bot.vault, interaction.guild_id,
                                        interaction.namespace.provider)
        return offered(self.bot.access, route, current)

    async def _unlisted(self, interaction: discord.Interaction, provider: str, model: str) -> list[str]:
        """The warning line when the provider's known list lacks `model`."""
        route = await server_list_route(self.bot.config, self.bot.vault, interaction.guild_id, provider)
        return unlisted_lines(self.bot.access, route, model, interaction.locale)

    @localized(fallback.command, "commands.model.fallback.remove")
    async def fallback_remove(self, interaction: discord.Interaction,
                              position: app_commands.Range[int, 1, 100]) -> None:
        async with self.bot.sessions() as session, session.begin():
            gone = await repo.remove_fallback(session, interaction.guild_id, position)
        if gone is None:
            await reply(interaction, "commands.reply.fallback_not_found", position=position)
            return
        await reply(interaction, "commands.reply.fallback_removed", position=position,
                    provider=gone.provider, model=gone.model)

    @localized(fallback.command, "commands.model.fallback.list")
    async def fallback_list(self, interaction: discord.Interaction) -> None:
        async with self.bot.sessions() as session:
            chain = await repo.list_fallbacks(session, interaction.guild_id)
        if not chain:
            await reply(interaction, "commands.reply.fallbacks_empty")
            return
        lines = [text(interaction, "commands.reply.fallbacks_header")]
        lines += [text(interaction, "commands.reply.chain_line", position=i, provider=target.provider,
                       model=target.model) for i, target in enumerate(chain, start=1)]
        await send(interaction, "\n".join(lines))

    @localized(model.command, "commands.model.price")
    async def price(self, interaction: discord.Interaction, model: str,
                    input_per_million: app_commands.Range[float, 0.0, MAX_PRICE],
                    output_per_million: app_commands.Range[float, 0.0, MAX_PRICE],
                    per_1000_searches: app_commands.Range[float, 0.0, MAX_PRICE] | None = None) -> None:
        """Without `per_1000_searches` a search price stored before is kept."""
        async with self.bot.sessions() as session, session.begin():
            stored = await set_price(session, interaction.guild_id, model, input_per_million, output_per_million,
                                     per_1000_searches)
        lines = [text(interaction, "commands.reply.price_set", model=stored, input=f"{input_per_million:g}",
                      output=f"{output_per_million:g}")]
        if per_1000_searches is not None:
            lines.append(text(interaction, "commands.reply.price_searches_set", price=f"{per_1000_searches:g}"))
        await send(interaction, "\n".join(lines))

    @localized(model.command, "commands.model.params")
    @app_commands.choices(reasoning=REASONING_CHOICES)
    async def params(self, interaction: discord.Interaction, temperature: app_commands.Range[float, 0, 2] | None = None,
                     max_output_tokens: app_commands.Range[int, 1, 200_000] | None = None,
                     reasoning: str | None = None) -> None:
        """Given values are stored (checked first); with none, the stored settings are shown."""
        async with self.bot.sessions() as session, session.begin():
            stored = await set_params(session, interaction.guild_id, temperature, max_output_tokens, reasoning)
            route = await repo.resolve_server_route(session, self.bot.settings, interaction.guild_id)
        say = partial(text, interaction)
        changed = (temperature, max_output_tokens, reasoning) != (None, None, None)
        lines = [say("commands.reply.params_saved")] if changed else []
        models = [self.bot.access.capabilities(target) for target in route.chain]
        await send(interaction, "\n".join([*lines, *params_lines(say, stored), *unsent_lines(say, stored, models)]))

    @localized(image.command, "commands.model.image.set")
    @app_commands.choices(provider=IMAGE_PROVIDER_CHOICES)
    async def image_set(self, interaction: discord.Interaction, provider: str, model: str) -> None:
        await set_image_route(self.bot, interaction, provider, model)

    @localized(image.command, "commands.model.image.clear")
    async def image_clear(self, interaction: discord.Interaction) -> None:
        await clear_image_route(self.bot, interaction)

    @localized(image.command, "commands.model.image.price", params={"model": "image_price_model"})
    async def image_price(self, interaction: discord.Interaction,
                          per_image: app_commands.Range[float, 0.0, MAX_PRICE], model: str | None = None) -> None:
        """Without `model`, the price is for the model of the server's own image route."""
        await price_image_route(self.bot, interaction, per_image, model)

    @localized(model.command, "commands.model.check")
    async def check_route(self, interaction: discord.Interaction) -> None:
        """One live request per capability of the server's route (`bot.check`)."""
        await check_server_route(self.bot, interaction)


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(ModelsCog(bot))
