"""`python -m bot`: validate settings, then log in and serve."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from typing import Any

import discord

from bot.settings import Settings, SettingsError, load_settings

MISSING_TOKEN = (
    "DISCORD_TOKEN is not set: export DISCORD_TOKEN=<your bot token> "
    "or put DISCORD_TOKEN=<your bot token> in a .env file here (see .env.example)."
)


def main() -> int:
    if sys.argv[1:2] == ["ask"]:  # try the default route in a terminal, no Discord (bot/ask.py)
        from bot.ask import ask_main

        return ask_main(sys.argv[2:])
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
        run_on_loop(settings, serve(bot, settings.DISCORD_TOKEN.get_secret_value()))
    except discord.LoginFailure:
        print("Discord refused DISCORD_TOKEN: check the bot token in the developer portal.", file=sys.stderr)
        return 2
    except discord.PrivilegedIntentsRequired:  # the gateway closed with 4014
        from bot.invite import MESSAGE_CONTENT_MISSING

        print(MESSAGE_CONTENT_MISSING, file=sys.stderr)
        return 2
    return 0


def run_on_loop(settings: Settings, main_coroutine: Coroutine[Any, Any, None]) -> None:
    """Run the bot on the event loop the operator chose (EVENT_LOOP)."""
    profile_path = os.environ.get(PROFILE_VARIABLE)
    if profile_path:
        install_profiler(profile_path)
    try:
        import uvloop
    except ImportError:  # not built for this platform (Windows): asyncio's own loop
        uvloop = None
    if settings.EVENT_LOOP == "uvloop" and uvloop is not None:
        uvloop.run(main_coroutine)
    else:
        asyncio.run(main_coroutine)


# For bench/load.py only: with this set, SIGUSR1 starts cProfile and SIGUSR2 stops it and
# writes its pstats to the path, so a bench profiles exactly the load it drives.
PROFILE_VARIABLE = "BOT_PROFILE_PATH"


def install_profiler(path: str) -> None:
    import cProfile

    profiler = cProfile.Profile()

    def start(*_: object) -> None:
        profiler.enable()

    def stop(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(path)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)


if __name__ == "__main__":
    raise SystemExit(main())
