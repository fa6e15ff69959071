"""`python -m bot ask "question"`: try a set-up without Discord.

A self-hoster's first check after setting a key: the question goes through the same
generation turn a mention does (`bot.turn.run_generation_turn`: key rotation, the
answer's bounds, the endpoint policy, the error headline and tips), on the operator's
default route (DEFAULT_TEXT_*), and the answer streams to the terminal
(`bot.terminal_sink`), with no terminal control sequence of the model's or a provider's
left in anything printed. No Discord token and no database are needed.

The reader is the operator: a failure's advice names the `.env` settings, not slash
commands (`ErrorScene.audience`); a provider silent for `WAITING_SECONDS` gets one line on
stderr saying what is awaited, where, and for how long at most (FIRST_TOKEN_DEADLINE_SECONDS,
the bot's own limit, so `bot ask` behaves as the bot would).

Exit status: 0 when the model answered, 1 when it did not (the headline and tips were
printed), 2 when the settings are incomplete or invalid (one line naming the setting).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TextIO

from bot.settings import Settings, SettingsError, default_route_problem, load_settings
from bot.terminal_sink import TERMINAL_MESSAGE_LIMIT, TerminalSink, terminal_safe
from bot.turn import EnvironmentCredentials, TurnContext, TurnOutcome, run_generation_turn
from bot.turn.access import ProviderAccess
from bot.turn.context import answer_limits
from providers import ChatRequest
from providers.address import route_address
from providers.client_pool import ClientPool
from providers.error_description import provider_display_name
from providers.i18n import t
from providers.types import Message
from stream.pacing import EditBudget

EXIT_ANSWERED, EXIT_FAILED, EXIT_SETTINGS = 0, 1, 2
USAGE = 'usage: python -m bot ask "your question"  (or: make ask Q="your question")'
SYSTEM_PROMPT = "You are a helpful assistant. Today is {date}."
WAITING_SECONDS = 3.0  # a provider silent this long gets the waiting line (once)


def terminal_settings() -> Settings | None:
    """The settings as `python -m bot` reads them, minus DISCORD_TOKEN, for a command run in
    a terminal, with logging set up for it; None when a setting is wrong or missing (its
    one line printed on stderr).

    The turn's own warnings and errors (never a key) go to stderr; its info lines would
    bury what the command prints, so they show only when LOG_LEVEL asks for DEBUG."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return None
    missing = missing_setting(settings)
    if missing is not None:
        print(missing, file=sys.stderr)
        return None
    level = logging.getLevelNamesMapping()[settings.LOG_LEVEL]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TerminalFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level if level <= logging.DEBUG else max(level, logging.WARNING), handlers=[handler])
    return settings


class TerminalFormatter(logging.Formatter):
    """Log lines for a terminal: a provider's words in a warning cannot drive the terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def missing_setting(settings: Settings) -> str | None:
    """The one line naming what the default route still lacks, or None when it is complete
    (a partly set route: the same line `python -m bot` refuses to start with)."""
    if not settings.DEFAULT_TEXT_PROVIDER and not settings.DEFAULT_TEXT_MODEL:
        return ("DEFAULT_TEXT_PROVIDER is not set: put DEFAULT_TEXT_PROVIDER=<openai, anthropic, google, "
                "openrouter, deepseek, zai or custom> in .env (see .env.example).")
    return default_route_problem(settings)


def terminal_locale(environ: Mapping[str, str] = os.environ) -> str | None:
    """The reader's language from LC_ALL, LC_MESSAGES or LANG (`ja_JP.UTF-8` -> `ja_JP`);
    None (English) for the C locale or when none is set."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "").split(".", 1)[0].split("@", 1)[0].strip()
        if value:
            return None if value in ("C", "POSIX") else value
    return None


def question_request(settings: Settings, question: str) -> ChatRequest:
    """The question alone, under a plain system prompt (no persona, no history)."""
    system = SYSTEM_PROMPT.format(date=datetime.now(UTC).strftime("%Y-%m-%d"))
    return ChatRequest(messages=[Message(role="user", content=question)], system=system,
                       max_output_tokens=settings.MAX_OUTPUT_TOKENS)


def terminal_budget() -> EditBudget:
    """A terminal takes an edit whenever one is due: only Discord needs channel pacing."""
    return EditBudget(limit=1000, window=1.0, reserve=0, margin=0.0)


async def ask(settings: Settings, question: str, out: TextIO, err: TextIO, locale: str | None = None) -> int:
    """One generation turn on the default route, streamed to `out`; the exit status."""
    sink = TerminalSink(out, err)
    clients = ClientPool(settings.PROVIDER_HTTP_TRANSPORT, settings.PROVIDER_READ_INTERVAL_MS / 1000)
    ctx = TurnContext(user_id=0, guild_id=None, channel_id=0, locale=locale, sink=sink, budget=terminal_budget(),
                      limits=answer_limits(settings), max_messages=1, message_limit=TERMINAL_MESSAGE_LIMIT,
                      access=ProviderAccess.of(settings, clients), audience="terminal")
    waiting = asyncio.ensure_future(say_waiting(sink, err, waiting_line(settings, locale)))
    try:
        outcome = await run_generation_turn(ctx, question_request(settings, question),
                                            EnvironmentCredentials(settings))
    finally:
        waiting.cancel()
        sink.close()
        await clients.aclose()
    status = await exit_status(outcome, sink, locale)
    if status != EXIT_ANSWERED:
        print(route_line(settings), file=err)
    return status


def waiting_line(settings: Settings, locale: str | None) -> str:
    """"Waiting for OpenAI at api.openai.com/v1… (at most 90 s; Ctrl-C to stop)": host and
    path only (a key may ride in the rest of the address)."""
    provider = settings.DEFAULT_TEXT_PROVIDER or ""
    address = route_address(provider, settings.DEFAULT_TEXT_BASE_URL) or "DEFAULT_TEXT_BASE_URL"
    return t("chat.ask.waiting", locale, provider=provider_display_name(provider, locale), address=address,
             seconds=f"{settings.FIRST_TOKEN_DEADLINE_SECONDS:g}")


async def say_waiting(sink: TerminalSink, err: TextIO, line: str) -> None:
    """One line on `err` when nothing was printed `WAITING_SECONDS` after the question left:
    a silent endpoint is not a hung command. Once, never a spinner (logs stay readable)."""
    await asyncio.sleep(WAITING_SECONDS)
    if not sink.printed_anything:
        err.write(terminal_safe(line) + "\n")
        err.flush()


async def exit_status(outcome: TurnOutcome, sink: TerminalSink, locale: str | None) -> int:
    """0 for an answer; 1 when the turn ended without one (its reason was printed)."""
    result = outcome.result
    if outcome.blocked is not None or result is None or result.error is not None:
        return EXIT_FAILED
    if result.status == "empty_response":
        await sink.send(t("chat.empty_response", locale))
        sink.close()
        return EXIT_FAILED
    return EXIT_ANSWERED


def route_line(settings: Settings) -> str:
    """Which settings the failed question used, all in .env. No address (it may hold a
    token) and no key, only their count."""
    keys = len(settings.default_text_api_keys())
    address = "DEFAULT_TEXT_BASE_URL" if settings.DEFAULT_TEXT_BASE_URL else "the provider's own address"
    return (f"Asked {settings.DEFAULT_TEXT_PROVIDER} model {settings.DEFAULT_TEXT_MODEL} at {address} with "
            f"{keys} key{'s' if keys != 1 else ''} of DEFAULT_TEXT_API_KEYS (check them in .env).")


def ask_main(argv: list[str]) -> int:
    """`python -m bot ask …`: settings as `python -m bot` reads them, minus DISCORD_TOKEN."""
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return EXIT_ANSWERED
    question = " ".join(argv).strip()
    if not question and not sys.stdin.isatty():
        question = sys.stdin.read().strip()  # `echo question | python -m bot ask`
    if not question:
        print(USAGE, file=sys.stderr)
        return EXIT_SETTINGS
    settings = terminal_settings()
    if settings is None:
        return EXIT_SETTINGS
    try:
        return asyncio.run(ask(settings, question, sys.stdout, sys.stderr, terminal_locale()))
    except KeyboardInterrupt:
        return 130
