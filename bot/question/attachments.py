"""Files a member shows the bot: the attachments of the question and of the messages it
replies to, downloaded and turned into content parts of the question's user turn.

Images become image parts, text files fenced blocks named by the file; everything
else, and whatever is too large, broken or over the limits, is left out with a note:
one line per file for the member (so they know what the model did not see) and a text
part for the model (so it does not answer as if it had seen it). Sizes are checked
from Discord's metadata before anything is downloaded. The conversion itself is pure
and lives in `bot.question.attachment_files`; images are decoded off the event loop, within the
process's decode budget, by `bot.question.images` (an image over that budget is refused with the
megapixels its format is read to).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import aiohttp
import discord

from bot.edge.embeds import locale_for_message
from bot.edge.sink import DiscordMessageSink
from bot.question.attachment_files import (
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_TEXT_BYTES,
    UnreadableFile,
    classify,
    decode_text,
    text_block,
)
from bot.question.images import decode_image
from providers.i18n import t
from providers.types import ContentPart, Message, TextPart
from stream.sink import SinkError

log = logging.getLogger(__name__)

MAX_IMAGES_PER_MESSAGE = 4
MAX_IMAGES_PER_REQUEST = 10
MAX_TEXT_FILES_PER_MESSAGE = 3
MAX_TEXT_FILES_PER_REQUEST = 6
NOTE_PREFIX = "-# "

Reason = Literal["image_too_large", "text_too_large", "unreadable", "not_text", "too_many_images",
                 "too_many_files", "unsupported", "download_failed"]
# Why a file was left out: the member's note (catalog key) and the model's words.
NOTE_KEYS: dict[str, str] = {
    "image_too_large": "chat.attachment.image_too_large",
    "text_too_large": "chat.attachment.text_too_large",
    "unreadable": "chat.attachment.unreadable",
    "not_text": "chat.attachment.not_text",
    "too_many_images": "chat.attachment.too_many_images",
    "too_many_files": "chat.attachment.too_many_files",
    "unsupported": "chat.attachment.unsupported",
    "download_failed": "chat.attachment.download_failed",
}
MODEL_WORDS: dict[str, str] = {
    "image_too_large": "the image is too large", "text_too_large": "the file is too large",
    "unreadable": "the image could not be read", "not_text": "the file is not text",
    "too_many_images": "too many images were attached", "too_many_files": "too many files were attached",
    "unsupported": "only images and text files can be read",
    "download_failed": "the file could not be downloaded",
}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A file the model does not see, and why (an image: the megapixels its kind is read to)."""

    filename: str
    reason: Reason
    megapixels: int = MAX_IMAGE_PIXELS // 1_000_000


@dataclass(slots=True)
class Gathered:
    """What is left of one question's budget, its refusals, and the parts of the message
    being read."""

    images_left: int = MAX_IMAGES_PER_REQUEST
    texts_left: int = MAX_TEXT_FILES_PER_REQUEST
    parts: list[ContentPart] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)

    def refuse(self, name: str, reason: Reason, megapixels: int | None = None) -> None:
        self.refusals.append(Refusal(name, reason) if megapixels is None else Refusal(name, reason, megapixels))
        self.parts.append(TextPart(f"[Attachment {name} was not read: {MODEL_WORDS[reason]}.]"))


async def _download(attachment: discord.Attachment, limit: int) -> bytes:
    """The file's bytes, refused from its stated size before any byte is fetched."""
    if attachment.size > limit:
        raise UnreadableFile("too_large")
    return await attachment.read()


async def _add_image(gathered: Gathered, attachment: discord.Attachment, label: str) -> bool:
    try:
        part = await decode_image(await _download(attachment, MAX_IMAGE_BYTES))
    except UnreadableFile as exc:
        gathered.refuse(attachment.filename, "image_too_large" if exc.reason == "too_large" else "unreadable",
                        exc.megapixels)
        return False
    gathered.parts += [TextPart(f"{label}: {attachment.filename}"), part]
    return True


async def _add_text(gathered: Gathered, attachment: discord.Attachment, label: str) -> bool:
    try:
        text = decode_text(await _download(attachment, MAX_TEXT_BYTES))
    except UnreadableFile as exc:
        gathered.refuse(attachment.filename, "text_too_large" if exc.reason == "too_large" else "not_text")
        return False
    gathered.parts.append(TextPart(f"{label}:\n{text_block(attachment.filename, text)}"))
    return True


async def _add_file(gathered: Gathered, attachment: discord.Attachment, label: str,
                    taken: dict[str, int]) -> None:
    """One attachment, within the message's and the question's limits."""
    kind = classify(attachment.filename, attachment.content_type)
    if kind == "other":
        gathered.refuse(attachment.filename, "unsupported")
        return
    if kind == "image":
        if taken["image"] >= MAX_IMAGES_PER_MESSAGE or gathered.images_left <= 0:
            gathered.refuse(attachment.filename, "too_many_images")
        elif await _add_image(gathered, attachment, f"{label} image"):
            taken["image"] += 1
            gathered.images_left -= 1
        return
    if taken["text"] >= MAX_TEXT_FILES_PER_MESSAGE or gathered.texts_left <= 0:
        gathered.refuse(attachment.filename, "too_many_files")
    elif await _add_text(gathered, attachment, f"{label} file"):
        taken["text"] += 1
        gathered.texts_left -= 1


async def gather_message(gathered: Gathered, message: discord.Message, label: str) -> list[ContentPart]:
    """The parts of one message's attachments (refusals recorded in `gathered`)."""
    gathered.parts = []
    taken = {"image": 0, "text": 0}
    for attachment in message.attachments:
        try:
            await _add_file(gathered, attachment, label, taken)
        except (discord.HTTPException, aiohttp.ClientError, TimeoutError):
            gathered.refuse(attachment.filename, "download_failed")
    return gathered.parts


def notes_text(refusals: Sequence[Refusal], locale: str | None) -> str:
    """One small line per file left out, in the server's language."""
    lines = []
    for refusal in refusals:
        note = t(NOTE_KEYS[refusal.reason], locale, name=discord.utils.escape_markdown(refusal.filename),
                 megabytes=MAX_IMAGE_BYTES // (1024 * 1024), megapixels=refusal.megapixels,
                 kilobytes=MAX_TEXT_BYTES // 1024, images=MAX_IMAGES_PER_MESSAGE,
                 images_in_all=MAX_IMAGES_PER_REQUEST, files=MAX_TEXT_FILES_PER_MESSAGE,
                 files_in_all=MAX_TEXT_FILES_PER_REQUEST)
        lines.append(NOTE_PREFIX + note)
    return "\n".join(lines)


async def _post_notes(message: discord.Message, refusals: Sequence[Refusal]) -> None:
    if not refusals:
        return
    text = notes_text(refusals, locale_for_message(message))
    with contextlib.suppress(SinkError):
        await DiscordMessageSink(message.channel, reply_to=message).send(text[:2000], reply=True)


async def question_message(message: discord.Message, chain: Sequence[discord.Message], prompt: str,
                           bot_id: int) -> Message:
    """The question's user turn: the prompt, plus the files of the question and of the
    earlier messages it replies to (the question's own first when the limits bite).

    Without any attachment this is the plain-string turn it always was; files left out
    are said to the member in one reply of small lines before the answer starts.
    """
    gathered = Gathered()
    own = await gather_message(gathered, message, "Attached")
    earlier: list[ContentPart] = []
    for previous in reversed(chain):  # newest first: the nearer context wins the budget
        if previous.author.id != bot_id and previous.attachments:
            earlier[:0] = await gather_message(gathered, previous, "Earlier message's")
    await _post_notes(message, gathered.refusals)
    if not own and not earlier:
        return Message("user", prompt)
    return Message("user", [*earlier, *own, *([TextPart(prompt)] if prompt else [])])
