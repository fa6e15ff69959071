"""`python -m bot`: validate settings, then log in and serve.

Every start-up failure an operator can cause (a bad or contradictory setting, a database
that cannot be reached, a schema or file that cannot be written, Discord out of reach, a
refused token or intent) ends with one line naming the cause and the setting and exit
status 2; the traceback is logged at DEBUG only. The database is prepared before Discord
is asked, so its failures are named as such.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

import discord

from bot.capabilities.images.environment import image_route_problem
from bot.encryption_key import KEY_FILE_NAME, resolve_encryption_keys
from bot.load.heap import return_large_blocks
from bot.logs import setup_bot_logging
from bot.settings import Settings, SettingsError, default_route_problem, load_settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from bot.app import LLMBot

log = logging.getLogger("bot")

MISSING_TOKEN = (
    "DISCORD_TOKEN is not set: export DISCORD_TOKEN=<your bot token> "
    "or put DISCORD_TOKEN=<your bot token> in a .env file here (see .env.example)."
)
BAD_TOKEN = "Discord refused DISCORD_TOKEN: check the bot token in the developer portal."


class StartupFailure(Exception):
    """Start-up cannot go on; `str()` is what the operator reads (at most three lines)."""


def main() -> int:
    if sys.argv[1:2] == ["ask"]:  # try the default route in a terminal, no Discord (bot/ask.py)
        from bot.ask import ask_main

        return ask_main(sys.argv[2:])
    if sys.argv[1:2] == ["check"]:  # every capability of the default route, live (bot/check/terminal.py)
        from bot.check.terminal import check_main

        return check_main(sys.argv[2:])
    try:
        settings = load_settings()
        if settings.DISCORD_TOKEN is None:
            print(MISSING_TOKEN, file=sys.stderr)
            return 2
        refuse_contradictions(settings)
        check_encryption_key(settings)
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    setup_bot_logging(logging.getLevelNamesMapping()[settings.LOG_LEVEL])
    from bot.edge.urls import apply_discord_urls

    apply_discord_urls(settings)
    return_large_blocks()  # before any image is decoded (bot/load/heap.py)
    try:
        run_on_loop(settings, start(settings))
    except StartupFailure as exc:
        log.debug("start-up failed", exc_info=exc.__cause__ or exc)
        print(exc, file=sys.stderr)
        return 2
    return 0


def refuse_contradictions(settings: Settings) -> None:
    """Settings that are each valid but cannot work together; without this the bot would
    start and ignore one of them (or serve as another shard) without a word."""
    count, ids = settings.SHARD_COUNT, settings.SHARD_IDS
    if ids and count is None:
        raise SettingsError("Invalid setting SHARD_IDS: needs SHARD_COUNT, the number of shards across all "
                            "processes (e.g. SHARD_COUNT=2, and SHARD_IDS=0 here and 1 in the other process)")
    if count is not None:
        outside = sorted({shard for shard in ids if not 0 <= shard < count})
        if outside:
            raise SettingsError(f"Invalid setting SHARD_IDS: shard {outside[0]} does not exist with "
                                f"SHARD_COUNT={count} (shard ids run from 0 to {count - 1})")
        if len(set(ids)) != len(ids):
            raise SettingsError("Invalid setting SHARD_IDS: a shard is listed twice")
    route_problem = default_route_problem(settings) or image_route_problem(settings)
    if route_problem is not None:
        raise SettingsError(route_problem)
    if settings.DATABASE_PGBOUNCER and not settings.DATABASE_URL.startswith("postgresql"):
        raise SettingsError("Invalid setting DATABASE_PGBOUNCER: PgBouncer stands before PostgreSQL; "
                            "DATABASE_URL is not a postgresql+asyncpg:// URL")
    if settings.DISCORD_REST_PROXY and not settings.DISCORD_API_BASE_URL:
        raise SettingsError("Invalid setting DISCORD_REST_PROXY: it says a shared REST proxy holds Discord's limit; "
                            "set DISCORD_API_BASE_URL to the proxy's address (e.g. http://rest-proxy:8080/api/v10)")
    if settings.DISCORD_GLOBAL_RATE == 0 and not settings.DISCORD_API_BASE_URL:
        raise SettingsError("Invalid setting DISCORD_GLOBAL_RATE: 0 (no budget of the bot's own) is only for a "
                            "shared REST proxy set in DISCORD_API_BASE_URL; real Discord needs it (default 50)")


def check_encryption_key(settings: Settings) -> None:
    """Refuse a bad BOT_ENCRYPTION_KEY or key file before anything is touched; a missing key
    file is made later, once the database showed that no stored key needs the lost one."""
    path = settings.sqlite_path
    if settings.BOT_ENCRYPTION_KEY is None and path is not None and not (path.parent / KEY_FILE_NAME).exists():
        return
    resolve_encryption_keys(settings)


async def start(settings: Settings) -> None:
    """The database first, then the bot with its key vault, then Discord."""
    engine = await prepared_database(settings)
    bot = built_bot(settings, engine)
    await serve_discord(bot, settings)


async def prepared_database(settings: Settings) -> AsyncEngine:
    """An engine on a migrated database whose stored keys this start can still read."""
    from bot import migrate
    from bot.db.engine import describe_database_failure, engine_for
    from bot.vault import refuse_lost_key_file

    engine: AsyncEngine | None = None
    try:
        engine = engine_for(settings)
        await migrate.upgrade(engine)
        await refuse_lost_key_file(settings, engine)
    except Exception as exc:
        if engine is not None:
            await engine.dispose()
        line = str(exc) if isinstance(exc, SettingsError) else describe_database_failure(exc, settings.DATABASE_URL)
        if line is None:
            raise
        raise StartupFailure(line) from exc
    await warn_of_connections(engine, settings)
    return engine


async def warn_of_connections(engine: AsyncEngine, settings: Settings) -> None:
    """One warning when all processes' pools could exceed PostgreSQL's max_connections; the
    bot still starts (a burst may never need them all), and a failed check says nothing."""
    from bot.db.engine import check_connections

    try:
        line = await check_connections(engine, settings)
    except Exception:  # the database just answered the migrations; this check is advice only
        log.debug("max_connections unread", exc_info=True)
        return
    if line is not None:
        log.warning(line)


def built_bot(settings: Settings, engine: AsyncEngine) -> LLMBot:
    """The bot; its encryption key is read or made here (a file that cannot be written is named)."""
    from bot.app import LLMBot

    try:
        return LLMBot(settings, engine=engine)
    except SettingsError as exc:
        raise StartupFailure(str(exc)) from exc
    except OSError as exc:
        where = exc.filename or "the encryption key file"
        raise StartupFailure(f"Cannot write {where} ({exc.strerror or exc}): make the folder of DATABASE_URL "
                             "writable by this user, or set BOT_ENCRYPTION_KEY.") from exc


async def serve_discord(bot: LLMBot, settings: Settings) -> None:
    from bot.db.engine import describe_database_failure
    from bot.edge.invite import MESSAGE_CONTENT_MISSING
    from bot.lifecycle import serve

    assert settings.DISCORD_TOKEN is not None
    try:
        await serve(bot, settings.DISCORD_TOKEN.get_secret_value())
    except discord.LoginFailure as exc:
        raise StartupFailure(BAD_TOKEN) from exc
    except discord.PrivilegedIntentsRequired as exc:  # the gateway closed with 4014
        raise StartupFailure(MESSAGE_CONTENT_MISSING) from exc
    except Exception as exc:
        line = describe_discord_failure(exc, settings) or describe_database_failure(exc, settings.DATABASE_URL)
        if line is None:
            raise
        raise StartupFailure(line) from exc


def describe_discord_failure(exc: BaseException, settings: Settings) -> str | None:
    """One line for what stops the bot reaching Discord (or opening METRICS_PORT); None otherwise."""
    import aiohttp

    from bot.db.engine import exception_chain

    api = settings.DISCORD_API_BASE_URL or discord.http.Route.BASE
    for cause in exception_chain(exc):
        if isinstance(cause, OSError) and cause.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL) \
                and settings.METRICS_PORT:
            return (f"Cannot open METRICS_PORT {settings.METRICS_PORT} for /metrics and /healthz ({cause.strerror}): "
                    "another process may use it; pick another METRICS_PORT.")
        if isinstance(cause, discord.GatewayNotFound):
            return "Discord did not give a gateway address: Discord may be down; try again later (or check DISCORD_API_BASE_URL)."
        if isinstance(cause, discord.DiscordServerError):
            return f"Discord answered {cause.status} at {api}: Discord is having trouble; try again later."
        if isinstance(cause, aiohttp.ClientConnectionError) or type(cause) is TimeoutError:
            os_error = getattr(cause, "os_error", None)
            reason = (os_error.strerror if isinstance(os_error, OSError) and os_error.strerror
                      else "no answer in time" if isinstance(cause, TimeoutError) else str(cause) or type(cause).__name__)
            return (f"Cannot reach Discord at {api} ({reason}): check this machine's network, DNS and proxy"
                    f"{', or DISCORD_API_BASE_URL' if settings.DISCORD_API_BASE_URL else ''}.")
    return None


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
