"""Files a member shows the bot: the attachments of the question and of the messages it
replies to, downloaded and turned into content parts of the question's user turn.

Images become image parts, a voice message an audio part (held to its size and checked to
be Ogg here; heard or transcribed per model by `bot.capabilities.voice`), text files
fenced blocks named by the file, Word and Excel files fenced blocks of their text (read
off the event loop in `bot.capabilities.reading.documents`, counted as text files) and PDFs document parts (read off the loop, each family sends
them in its own form, a text-only model gets their text); everything
else, and whatever is too large, broken or over the limits, is left out with a note:
one line per file for the member (so they know what the model did not see) and a text
part for the model (so it does not answer as if it had seen it). Sizes are checked
from Discord's metadata before anything is downloaded. The conversion itself is pure
and lives in `bot.capabilities.reading.attachment_files`; images are decoded off the event loop, within the
process's decode budget, by `bot.capabilities.reading.images` (an image over that budget is refused with the
megapixels its format is read to).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import aiohttp
import discord

from bot.capabilities.reading.attachment_files import (
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_TEXT_BYTES,
    UnreadableFile,
    classify,
    decode_text,
    text_block,
)
from bot.capabilities.reading.documents import read_office, read_pdf_off_loop
from bot.capabilities.reading.file_reads import FileReads
from bot.capabilities.reading.images import decode_image
from bot.capabilities.reading.office_files import (
    MAX_COLUMNS,
    MAX_DOCUMENT_BYTES,
    MAX_ROWS,
    MAX_SHEETS,
    MAX_UNPACKED_BYTES,
)
from bot.capabilities.reading.pdf_files import MAX_PDF_BYTES, MAX_PDF_PAGES, MAX_PDF_TEXT_BYTES
from bot.capabilities.voice.audio import MAX_VOICE_BYTES, VOICE_MEDIA_TYPE, is_ogg
from bot.edge.embeds import locale_for_message
from bot.edge.sink import DiscordMessageSink
from bot.readers.pool import configured
from providers.i18n import t
from providers.types import AudioPart, ContentPart, Message, TextPart
from stream.sink import SinkError

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_IMAGES_PER_MESSAGE = 4
MAX_IMAGES_PER_REQUEST = 10
MAX_TEXT_FILES_PER_MESSAGE = 3
MAX_TEXT_FILES_PER_REQUEST = 6  # Word and Excel files count here too: they reach the model as text
MAX_PDFS_PER_REQUEST = 2  # per message too
NOTE_PREFIX = "-# "

Reason = Literal["image_too_large", "text_too_large", "unreadable", "not_text", "too_many_images",
                 "too_many_files", "unsupported", "download_failed", "document_too_large",
                 "document_encrypted", "document_unreadable", "document_timeout", "document_busy",
                 "document_memory", "document_too_complex", "document_no_text", "document_cut",
                 "sheet_cut", "pdf_too_large", "pdf_too_many_pages", "pdf_encrypted", "pdf_unreadable",
                 "too_many_pdfs", "pdf_no_text", "pdf_text_cut", "voice_too_large", "not_audio"]
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
    "document_too_large": "chat.attachment.document_too_large",
    "document_encrypted": "chat.attachment.document_encrypted",
    "document_unreadable": "chat.attachment.document_unreadable",
    "document_timeout": "chat.attachment.document_timeout",
    "document_busy": "chat.attachment.document_busy",
    "document_memory": "chat.attachment.document_memory",
    "document_too_complex": "chat.attachment.document_too_complex",
    "document_no_text": "chat.attachment.document_no_text",
    "document_cut": "chat.attachment.document_cut",
    "sheet_cut": "chat.attachment.sheet_cut",
    "pdf_too_large": "chat.attachment.pdf_too_large",
    "pdf_too_many_pages": "chat.attachment.pdf_too_many_pages",
    "pdf_encrypted": "chat.attachment.pdf_encrypted",
    "pdf_unreadable": "chat.attachment.pdf_unreadable",
    "too_many_pdfs": "chat.attachment.too_many_pdfs",
    "pdf_no_text": "chat.attachment.pdf_no_text",
    "pdf_text_cut": "chat.attachment.pdf_text_cut",
    "voice_too_large": "chat.voice.too_large",
    "not_audio": "chat.voice.not_audio",
}
MODEL_WORDS: dict[str, str] = {
    "image_too_large": "the image is too large", "text_too_large": "the file is too large",
    "unreadable": "the image could not be read", "not_text": "the file is not text",
    "too_many_images": "too many images were attached", "too_many_files": "too many files were attached",
    "unsupported": "only images, text files, PDFs and Word, Excel and CSV files can be read",
    "download_failed": "the file could not be downloaded",
    "document_too_large": "the file is too large", "document_encrypted": "the file is password-protected",
    "document_unreadable": "the file could not be read", "document_timeout": "reading the file took too long",
    "document_busy": "the file readers were busy", "document_memory": "reading the file needed too much memory",
    "document_too_complex": "the file holds too many elements to read",
    "document_no_text": "the file holds no text (only images, charts or drawings, if anything)",
    "pdf_too_large": "the PDF is too large", "pdf_too_many_pages": "the PDF has too many pages",
    "pdf_encrypted": "the PDF is password-protected", "pdf_unreadable": "the PDF could not be read",
    "too_many_pdfs": "too many PDFs were attached",
    "voice_too_large": "the voice message is too large", "not_audio": "the voice message is not audio",
}
# Reasons that only tell the member: the model has the file (what was cut is marked in it).
NOTE_ONLY = frozenset({"document_cut", "sheet_cut", "pdf_no_text", "pdf_text_cut"})
# UnreadableFile's reason -> the refusal, for Word/Excel files and for PDFs.
READER_REASONS: dict[str, Reason] = {"timeout": "document_timeout", "busy": "document_busy",
                                     "out_of_memory": "document_memory"}  # the reader pool's
OFFICE_REASONS: dict[str, Reason] = {"too_large": "document_too_large", "encrypted": "document_encrypted",
                                     "too_complex": "document_too_complex", **READER_REASONS}
PDF_REASONS: dict[str, Reason] = {"too_large": "pdf_too_large", "too_many_pages": "pdf_too_many_pages",
                                  "encrypted": "pdf_encrypted", **READER_REASONS}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A file the model does not see, or sees only in part (`NOTE_ONLY`), and why (an image:
    the megapixels its kind is read to)."""

    filename: str
    reason: Reason
    megapixels: int = MAX_IMAGE_PIXELS // 1_000_000


@dataclass(slots=True)
class Gathered:
    """What is left of one question's budget, its refusals, and the parts of the message
    being read."""

    images_left: int = MAX_IMAGES_PER_REQUEST
    texts_left: int = MAX_TEXT_FILES_PER_REQUEST
    pdfs_left: int = MAX_PDFS_PER_REQUEST
    parts: list[ContentPart] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    reads: FileReads = field(default_factory=FileReads)  # the batch's files, each read once

    def refuse(self, name: str, reason: Reason, megapixels: int | None = None) -> None:
        self.refusals.append(Refusal(name, reason) if megapixels is None else Refusal(name, reason, megapixels))
        if reason not in NOTE_ONLY:
            self.parts.append(TextPart(f"[Attachment {name} was not read: {MODEL_WORDS[reason]}.]"))


async def _download(attachment: discord.Attachment, limit: int) -> bytes:
    """The file's bytes, refused from its stated size before any byte is fetched."""
    if attachment.size > limit:
        raise UnreadableFile("too_large")
    return await attachment.read()


async def _downloaded(attachment: discord.Attachment, limit: int,
                      read: Callable[[bytes], Awaitable[T]]) -> T:
    """The file downloaded (within `limit`) and read."""
    return await read(await _download(attachment, limit))


async def _decoded_text(data: bytes) -> str:
    return decode_text(data)


async def _add_image(gathered: Gathered, attachment: discord.Attachment, label: str) -> bool:
    try:
        part = await gathered.reads.once(
            attachment.id, lambda: _downloaded(attachment, MAX_IMAGE_BYTES, decode_image))
    except UnreadableFile as exc:
        gathered.refuse(attachment.filename, "image_too_large" if exc.reason == "too_large" else "unreadable",
                        exc.megapixels)
        return False
    gathered.parts += [TextPart(f"{label}: {attachment.filename}"), part]
    return True


async def _add_text(gathered: Gathered, attachment: discord.Attachment, label: str) -> bool:
    try:
        text = await gathered.reads.once(
            attachment.id, lambda: _downloaded(attachment, MAX_TEXT_BYTES, _decoded_text))
    except UnreadableFile as exc:
        gathered.refuse(attachment.filename, "text_too_large" if exc.reason == "too_large" else "not_text")
        return False
    gathered.parts.append(TextPart(f"{label}:\n{text_block(attachment.filename, text)}"))
    return True


async def _add_office(gathered: Gathered, attachment: discord.Attachment, label: str, kind: str) -> bool:
    """A Word or Excel file as fenced blocks of its text (a workbook: one a sheet)."""
    try:
        read = await gathered.reads.once(attachment.id, lambda: _downloaded(
            attachment, MAX_DOCUMENT_BYTES, lambda data: read_office(data, attachment.filename, kind)))
    except UnreadableFile as exc:
        gathered.refuse(attachment.filename, OFFICE_REASONS.get(exc.reason, "document_unreadable"))
        return False
    if not any(section.text.strip() for section in read.sections):  # named, never an empty block
        gathered.refuse(attachment.filename, "document_no_text")
        return False
    blocks = "\n\n".join(text_block(s.title, s.text, s.language) for s in read.sections)
    gathered.parts.append(TextPart(f"{label}:\n{blocks}"))
    if read.cut:
        gathered.refuse(attachment.filename, "sheet_cut" if kind == "xlsx" else "document_cut")
    return True


async def _add_pdf(gathered: Gathered, attachment: discord.Attachment, label: str) -> bool:
    """A PDF as a document part carrying its text (the note says when it has none or was cut)."""
    try:
        document = await gathered.reads.once(attachment.id, lambda: _downloaded(
            attachment, MAX_PDF_BYTES, lambda data: read_pdf_off_loop(data, attachment.filename)))
    except UnreadableFile as exc:
        gathered.refuse(attachment.filename, PDF_REASONS.get(exc.reason, "pdf_unreadable"))
        return False
    gathered.parts += [TextPart(f"{label}: {attachment.filename}"), document]
    if document.text is None:
        gathered.refuse(attachment.filename, "pdf_no_text")
    elif document.text_cut:
        gathered.refuse(attachment.filename, "pdf_text_cut")
    return True


async def _add_voice(gathered: Gathered, attachment: discord.Attachment, label: str) -> None:
    """A voice message as an audio part (`bot.capabilities.voice` decides, per model, whether
    it is heard or transcribed); too large or not an Ogg stream: refused."""
    if attachment.size > MAX_VOICE_BYTES:
        gathered.refuse(attachment.filename, "voice_too_large")
        return
    data = await gathered.reads.once(attachment.id, attachment.read)
    if not is_ogg(data):
        gathered.refuse(attachment.filename, "not_audio")
        return
    gathered.parts += [TextPart(f"{label} voice message:"),
                       AudioPart(VOICE_MEDIA_TYPE, data, attachment.filename, attachment.duration or 0.0,
                                 attachment.id)]


async def _add_file(gathered: Gathered, attachment: discord.Attachment, label: str,
                    taken: dict[str, int]) -> None:
    """One attachment, within the message's and the question's limits."""
    kind = classify(attachment.filename, attachment.content_type)
    if kind == "pdf":
        if taken["pdf"] >= MAX_PDFS_PER_REQUEST or gathered.pdfs_left <= 0:
            gathered.refuse(attachment.filename, "too_many_pdfs")
        elif await _add_pdf(gathered, attachment, f"{label} PDF"):
            taken["pdf"] += 1
            gathered.pdfs_left -= 1
        return
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
    elif kind in ("docx", "xlsx") and await _add_office(gathered, attachment, f"{label} file", kind):
        taken["text"] += 1
        gathered.texts_left -= 1
    elif kind == "text" and await _add_text(gathered, attachment, f"{label} file"):
        taken["text"] += 1
        gathered.texts_left -= 1


async def gather_message(gathered: Gathered, message: discord.Message, label: str) -> list[ContentPart]:
    """The parts of one message's attachments (refusals recorded in `gathered`)."""
    gathered.parts = []
    taken = {"image": 0, "text": 0, "pdf": 0}
    for attachment in message.attachments:
        try:
            if message.flags.voice and attachment.is_voice_message():
                await _add_voice(gathered, attachment, label)
                continue
            await _add_file(gathered, attachment, label, taken)
        except (discord.HTTPException, aiohttp.ClientError, TimeoutError):
            gathered.refuse(attachment.filename, "download_failed")
    return gathered.parts


# What the document notes name: the bounds, in the units a member reads.
DOCUMENT_BOUNDS = {
    "document_megabytes": MAX_DOCUMENT_BYTES // (1024 * 1024),
    "unpacked_megabytes": MAX_UNPACKED_BYTES // (1024 * 1024),
    "sheets": MAX_SHEETS, "rows": MAX_ROWS, "columns": MAX_COLUMNS,
    "pdf_megabytes": MAX_PDF_BYTES // (1024 * 1024), "pages": MAX_PDF_PAGES,
    "pdf_kilobytes": MAX_PDF_TEXT_BYTES // 1024, "pdfs": MAX_PDFS_PER_REQUEST,
    "voice_megabytes": MAX_VOICE_BYTES // (1024 * 1024),
}


def _reader_bounds() -> dict[str, int]:
    """The reader pool's bounds as the operator set them."""
    config = configured()
    return {"seconds": math.ceil(config.seconds), "wait_seconds": math.ceil(config.wait_seconds),
            "memory_megabytes": config.memory_mib}


def notes_text(refusals: Sequence[Refusal], locale: str | None) -> str:
    """One small line per file left out, in the server's language."""
    lines = []
    for refusal in refusals:
        note = t(NOTE_KEYS[refusal.reason], locale, name=discord.utils.escape_markdown(refusal.filename),
                 megabytes=MAX_IMAGE_BYTES // (1024 * 1024), megapixels=refusal.megapixels,
                 kilobytes=MAX_TEXT_BYTES // 1024, images=MAX_IMAGES_PER_MESSAGE,
                 images_in_all=MAX_IMAGES_PER_REQUEST, files=MAX_TEXT_FILES_PER_MESSAGE,
                 files_in_all=MAX_TEXT_FILES_PER_REQUEST, **DOCUMENT_BOUNDS, **_reader_bounds())
        lines.append(NOTE_PREFIX + note)
    return "\n".join(lines)


async def _post_notes(message: discord.Message, refusals: Sequence[Refusal]) -> None:
    if not refusals:
        return
    text = notes_text(refusals, locale_for_message(message))
    with contextlib.suppress(SinkError):
        await DiscordMessageSink(message.channel, reply_to=message).send(text[:2000], reply=True)


async def question_message(message: discord.Message, chain: Sequence[discord.Message], prompt: str,
                           bot_id: int, reads: FileReads | None = None) -> Message:
    """The question's user turn: the prompt, plus the files of the question and of the
    earlier messages it replies to (the question's own first when the limits bite).

    Without any attachment this is the plain-string turn it always was; files left out
    are said to the member in one reply of small lines before the answer starts. `reads`:
    what the files of a batch's messages were read to when it was prepared before.
    """
    gathered = Gathered(reads=reads if reads is not None else FileReads())
    own = await gather_message(gathered, message, "Attached")
    earlier: list[ContentPart] = []
    for previous in reversed(chain):  # newest first: the nearer context wins the budget
        if previous.author.id != bot_id and previous.attachments:
            earlier[:0] = await gather_message(gathered, previous, "Earlier message's")
    await _post_notes(message, gathered.refusals)
    if not own and not earlier:
        return Message("user", prompt)
    return Message("user", [*earlier, *own, *([TextPart(prompt)] if prompt else [])])
