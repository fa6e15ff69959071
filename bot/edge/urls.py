"""Point discord.py at a Discord-compatible server (or the test fake)."""

from __future__ import annotations

import discord.gateway
import discord.http
import yarl

from bot.settings import Settings


def apply_discord_urls(settings: Settings) -> None:
    if settings.DISCORD_API_BASE_URL:
        discord.http.Route.BASE = settings.DISCORD_API_BASE_URL
    if settings.DISCORD_GATEWAY_URL:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.DISCORD_GATEWAY_URL)
