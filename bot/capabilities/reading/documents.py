"""Documents read in the reader pool's processes (`bot.readers`), never on the bot's own.

Reading a Word, Excel or PDF file is pure-Python work of up to seconds that a hostile file
can stretch to hours and gigabytes; in a thread it would hold the GIL the event loop needs
and could not be stopped. Each file goes to a child of the reader pool instead, with the
pool's bounds: a deadline (the child is killed and replaced past it), a memory cap, and a
bounded wait for a free child. Whatever stops a file is an `UnreadableFile` naming why
(the reader's own reason, or "timeout", "out_of_memory", "busy", "reader_failed"), so the
question goes on without it and the member's note says so.

The readers are named by import path: the child imports the one it needs, the bot none.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.readers.pool import ReadFailed, Reading, reader_pool

if TYPE_CHECKING:
    from bot.capabilities.reading.office_files import OfficeText
    from providers.types import DocumentPart

log = logging.getLogger(__name__)

READERS = {"docx": "bot.capabilities.reading.office_files:docx_text", "xlsx": "bot.capabilities.reading.office_files:xlsx_text",
           "pdf": "bot.capabilities.reading.pdf_files:read_pdf"}


async def run_reader(reader: str, data: bytes, filename: str) -> Any:
    """`reader(data, filename, deadline=...)` in a reader process; UnreadableFile when it
    gives nothing back."""
    try:
        return await reader_pool().read(Reading(reader, (data, filename)))
    except ReadFailed as failed:
        if failed.reason == "reader_failed":
            log.warning("a document reader failed (%s, %s)", reader, failed.detail[:80])
        raise UnreadableFile(failed.reason) from None  # type: ignore[arg-type]


async def read_office(data: bytes, filename: str, kind: str) -> OfficeText:
    """A .docx (`kind` "docx") or .xlsx ("xlsx") as text."""
    return await run_reader(READERS[kind], data, filename)  # type: ignore[no-any-return]


async def read_pdf_off_loop(data: bytes, filename: str) -> DocumentPart:
    """`read_pdf`, in a reader process."""
    return await run_reader(READERS["pdf"], data, filename)  # type: ignore[no-any-return]
