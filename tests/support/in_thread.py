"""Product steps run in the calling thread, for tests that look at one step's result
without the event loop, the worker threads or the decode budget the bot uses."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from bot.capabilities.reading.attachment_files import decode_opened, open_image
from bot.question.history import _grouped
from providers.types import ImagePart, Message


def prepare_image(data: bytes) -> ImagePart:
    """The image decoded, upright, downscaled and re-encoded, as `decode_image` does off
    the event loop."""
    return decode_opened(open_image(data))


def dm_turns(messages: Sequence[discord.Message], bot_id: int) -> list[Message]:
    """DM messages (oldest first) as the turns a DM's history makes of them."""
    return [turn for turn, _ in _grouped(messages, bot_id, named=False)]
