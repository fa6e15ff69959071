"""How a drawn image is shown: its file name and the small line with the prompt used,
on one line, its Markdown shown as typed, cut to a line's worth."""

from __future__ import annotations

import discord

from providers.i18n import t
from providers.images import DrawnImage

PROMPT_LINE_CHARS = 300


def shown_prompt(prompt: str) -> str:
    """The prompt on one line, Markdown escaped, at most PROMPT_LINE_CHARS characters."""
    one_line = " ".join(prompt.split())
    if len(one_line) > PROMPT_LINE_CHARS:
        one_line = one_line[: PROMPT_LINE_CHARS - 1] + "\u2026"
    return discord.utils.escape_markdown(one_line)


def prompt_line(prompt: str, locale: object) -> str:
    """`-# prompt: …`: the small line under an image."""
    return f"-# {t('chat.images.prompt_line', locale, prompt=shown_prompt(prompt))}"


def file_name(image: DrawnImage) -> str:
    return f"image.{image.extension}"
