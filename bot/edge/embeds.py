"""The error embed as a `discord.Embed`, in the locale of whoever will read it.

A mention reply is read by the channel, so it uses the guild's preferred locale; DMs have
no guild: English. The layout itself lives in `bot.errors.embed`.
"""

from __future__ import annotations

import discord

from stream.sink import EmbedSpec


def locale_for_message(message: discord.Message) -> str | None:
    """The guild's preferred locale (`ja`, `en-US`), or None (English) outside a guild."""
    guild = message.guild
    if guild is None or guild.preferred_locale is None:
        return None
    return guild.preferred_locale.value


def embed_from_spec(spec: EmbedSpec) -> discord.Embed:
    """A neutral EmbedSpec as discord.py's Embed (tips as non-inline fields)."""
    embed = discord.Embed(
        title=spec.title or None, description=spec.description or None, color=spec.color
    )
    for name, value in spec.fields:
        embed.add_field(name=name, value=value, inline=False)
    if spec.footer:
        embed.set_footer(text=spec.footer)
    return embed
