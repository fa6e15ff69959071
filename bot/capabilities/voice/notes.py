"""What the member reads about their voice message: the transcript in a small quote line
above the answer, and the one-line notes (past the bounds, not heard, not set up)."""

from __future__ import annotations

import contextlib

import discord

from bot.edge.sink import DiscordMessageSink
from bot.question.context import Question
from providers.i18n import t
from stream.sink import SinkError

QUOTE_PREFIX = "> -# "  # a quote of small text: the member's words, above the answer
MAX_QUOTE_CHARS = 1800  # one Discord message with the prefix and the icon; a longer transcript is cut here


def quote_line(transcript: str, locale: str | None) -> str:
    """The transcript as the member reads it: one small quoted line, markdown and mentions
    escaped (the words are the member's, shown by the bot), cut to one message."""
    words = " ".join(transcript.split())
    if not words:
        return QUOTE_PREFIX + t("chat.voice.no_words", locale)
    if len(words) > MAX_QUOTE_CHARS:
        words = words[:MAX_QUOTE_CHARS].rstrip() + "…"
    shown = discord.utils.escape_mentions(discord.utils.escape_markdown(words))
    return QUOTE_PREFIX + t("chat.voice.transcript", locale, words=shown)


async def show_transcript(question: Question, transcript: str) -> None:
    """The quote line, in reply to the voice message, before the answer's first words."""
    with contextlib.suppress(SinkError):
        await DiscordMessageSink(question.message.channel, reply_to=question.message).send(
            quote_line(transcript, question.locale), reply=True)
