"""`python -m bot`: validate settings, then log in and serve."""

from __future__ import annotations

import asyncio
import logging
import sys

import discord

from bot.settings import SettingsError, load_settings

MISSING_TOKEN = (
    "DISCORD_TOKEN is not set: export DISCORD_TOKEN=<your bot token> "
    "or put DISCORD_TOKEN=<your bot token> in a .env file here (see .env.example)."
)


def main() -> int:
    try:
        settings = load_settings()
        if settings.DISCORD_TOKEN is None:
            print(MISSING_TOKEN, file=sys.stderr)
            return 2
        from bot.app import LLMBot
        from bot.discord_urls import apply_discord_urls
        apply_discord_urls(settings)
        bot = LLMBot(settings)
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    discord.utils.setup_logging(level=logging.getLevelNamesMapping()[settings.LOG_LEVEL], root=True)
    from bot.lifecycle import serve

    try:
        asyncio.run(serve(bot, settings.DISCORD_TOKEN.get_secret_value()))
    except discord.LoginFailure:
        print("Discord refused DISCORD_TOKEN: check the bot token in the developer portal.", file=sys.stderr)
        return 2
    except discord.PrivilegedIntentsRequired:  # the gateway closed with 4014
        from bot.invite import MESSAGE_CONTENT_MISSING

        print(MESSAGE_CONTENT_MISSING, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
