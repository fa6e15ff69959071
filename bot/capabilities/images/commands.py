"""`/imagine prompt [size] [image]`: an image drawn on the server's image route (else the
operator's) and posted in the channel as a file, with the prompt used in a small line.

Where the bot answers (the server's channel and member rules, ALLOW_DMS), for a member
who may post files here themselves (the image speaks in the channel for them). The
ephemeral "drawing…" line becomes the outcome: done, the member's daily limit, a safety
refusal (a note, not an error), or what failed. Every refusal is one ephemeral line.
"""

from __future__ import annotations

import contextlib
import io
import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.capabilities.images.drawing import (
    DEFAULT_SIZE,
    MAX_SOURCE_BYTES,
    SIZES,
    SOURCE_TYPES,
    prompt_refusal,
)
from bot.capabilities.images.posting import file_name, prompt_line
from bot.capabilities.images.service import DrawPlace, Images
from bot.capabilities.images.settings import server_images
from bot.cogs.base import reply, text
from bot.edge.translator import localized, lstr
from bot.load.config_cache import ConfigSnapshot, read_config
from bot.question.admission import REFUSAL_KEYS, MessageFacts, decide
from providers.images import ImageAsk

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)

SIZE_CHOICES = [app_commands.Choice(name=lstr(key), value=size) for key, size in zip(
    ("commands.choice.image_square", "commands.choice.image_landscape", "commands.choice.image_portrait"),
    SIZES, strict=True)]


def facts_of(interaction: discord.Interaction) -> MessageFacts:
    """The invocation as admission reads a message: where, who, their roles."""
    user, channel = interaction.user, interaction.channel
    member = isinstance(user, discord.Member)
    parent = getattr(channel, "parent_id", None) if isinstance(channel, discord.Thread) else None
    category = getattr(getattr(channel, "parent", None) if parent else channel, "category_id", None)
    return MessageFacts(interaction.guild_id, interaction.channel_id or 0, parent, user.id,
                        frozenset(role.id for role in user.roles) if member else frozenset(),
                        member and user.guild_permissions.manage_guild, category)


def may_post_files(interaction: discord.Interaction) -> bool:
    """In a server channel the member may send messages with files themselves; a DM may always."""
    if interaction.guild_id is None:
        return True
    allowed = interaction.permissions
    sends = allowed.send_messages_in_threads if isinstance(interaction.channel, discord.Thread) else allowed.send_messages
    return sends and allowed.attach_files


class ImagesCog(commands.Cog):
    """/imagine (see the module docstring)."""

    def __init__(self, bot: LLMBot) -> None:
        self.bot = bot
        self.images = Images.of(bot.settings, getattr(bot, "sessions", None), getattr(bot, "vault", None))

    @localized(app_commands.command, "commands.imagine",
               params={"prompt": "imagine_prompt", "size": "imagine_size", "image": "imagine_image"})
    @app_commands.choices(size=SIZE_CHOICES)
    async def imagine(self, interaction: discord.Interaction, prompt: str, size: str = DEFAULT_SIZE,
                      image: discord.Attachment | None = None) -> None:
        """Draw `prompt` (changing `image` when given) and post it here."""
        config = await read_config(getattr(self.bot, "config", None), interaction.guild_id, interaction.user.id)
        server = config.server
        allowed = server_images(server.settings.by_capability["images"] if server is not None else None)
        route = self.images.route_for(server)
        if isinstance(route, tuple):  # no image route here, or the server's has no usable key
            await reply(interaction, route[0], **route[1])
            return
        refusal = self._refusal(interaction, config, allowed, prompt, size, image)
        if refusal is not None:
            key, params = refusal
            await reply(interaction, key, **params)
            return
        await interaction.response.send_message(text(interaction, "commands.imagine.working"), ephemeral=True)
        try:
            place = DrawPlace(route, interaction.guild_id, server.limits.images_per_day if server else None)
            line = await self._drawn_and_posted(interaction, ImageAsk(prompt, size), image, place)
        except discord.HTTPException:
            log.warning("an image could not be posted", exc_info=True)
            line = text(interaction, "commands.imagine.not_posted")
        except Exception:  # noqa: BLE001 - one failed drawing must not leave "Drawing…" forever
            log.exception("/imagine failed")
            line = text(interaction, "chat.images.failed_failed")
        with contextlib.suppress(discord.HTTPException):  # an expired token leaves "Drawing…": harmless
            await interaction.edit_original_response(content=line)

    async def _drawn_and_posted(self, interaction: discord.Interaction, asked: ImageAsk,
                                image: discord.Attachment | None, place: DrawPlace) -> str:
        """Draw at `place`, post the image here with its prompt line; the ephemeral outcome line."""
        prompt, size = asked.prompt, asked.size
        try:
            source = await image.read() if image is not None else None
        except discord.HTTPException:
            return text(interaction, "commands.imagine.unreadable")
        ask = ImageAsk(prompt, size, source, image.filename if image else "image.png",
                       (image.content_type or "image/png").split(";")[0] if image else "image/png")
        drawing = await self.images.draw_for(interaction.user.id, ask, place)
        if drawing.image is None:
            return text(interaction, drawing.line or "chat.images.failed_failed", **drawing.params)
        await interaction.followup.send(prompt_line(prompt, interaction.locale),
                                        file=discord.File(io.BytesIO(drawing.image.data), file_name(drawing.image)),
                                        allowed_mentions=discord.AllowedMentions.none())
        return text(interaction, "commands.imagine.done")

    def _refusal(self, interaction: discord.Interaction, config: ConfigSnapshot, allowed: bool, prompt: str,
                 size: str, image: discord.Attachment | None) -> tuple[str, dict[str, object]] | None:
        """The line refusing this /imagine where it has a route, or None when it may draw."""
        server = config.server
        decision = decide(facts_of(interaction), server.controls if server is not None else None,
                          allow_dms=self.bot.settings.ALLOW_DMS)
        if decision.action != "answer":
            return (REFUSAL_KEYS[decision.reason] if decision.reason else "commands.imagine.not_here"), {}
        if not allowed:
            return "commands.imagine.off", {}
        if not may_post_files(interaction):
            return "commands.imagine.cannot_post", {}
        if size not in SIZES:
            return "commands.imagine.bad_size", {}
        if image is not None and (image.content_type or "").split(";")[0] not in SOURCE_TYPES:
            return "commands.imagine.bad_image", {}
        if image is not None and image.size > MAX_SOURCE_BYTES:
            return "commands.imagine.large_image", {"limit": MAX_SOURCE_BYTES // (1024 * 1024)}
        return prompt_refusal(prompt)


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(ImagesCog(bot))
