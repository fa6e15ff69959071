"""The bot's log at start: what an operator reads, without noise.

Colour codes only on a terminal (discord.py also colours under Docker, where `docker
compose logs` and log collectors show them as garbage); no warnings about voice
libraries (the bot never joins a voice channel); no line announcing the static token
login; alembic's own lines only when debugging (`bot.migrate` says what it migrated).
"""

from __future__ import annotations

import logging
import sys

import discord
from discord.voice_client import VoiceClient

PLAIN = logging.Formatter("[{asctime}] [{levelname:<8}] {name}: {message}", "%Y-%m-%d %H:%M:%S", style="{")
_LOGIN_LINE = "logging in using static token"


class _WithoutLoginLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _LOGIN_LINE


def setup_bot_logging(level: int) -> None:
    """Root logging to standard error at `level`, as `python -m bot` runs."""
    coloured = sys.stderr.isatty()
    discord.utils.setup_logging(level=level, root=True, **({} if coloured else {"formatter": PLAIN}))
    VoiceClient.warn_nacl = VoiceClient.warn_dave = False  # read when the client is made
    logging.getLogger("discord.client").addFilter(_WithoutLoginLine())
    quiet_alembic()


def quiet_alembic() -> None:
    """alembic's lines (its context, each migration's whole docstring) only when debugging."""
    if logging.getLogger().level > logging.DEBUG:
        for name in ("alembic.runtime.plugins", "alembic.runtime.migration"):
            logging.getLogger(name).setLevel(logging.WARNING)
