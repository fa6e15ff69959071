"""A PDF as the model gets it (pure, no I/O): the file itself, for the families that read
documents, and its text layer, for the rest.

pypdf is pure Python (no native code to build or to crash on a hostile file) and bounds
its own work: every stream it inflates, every array and dictionary it builds, the page
tree it walks. Those bounds are set here well under pypdf's defaults, for a file of at most
`MAX_PDF_BYTES`, and the external JBIG2 decoder it may call is turned off. A PDF with a
password, even the empty one of a file that only forbids printing, is refused: what would
reach a provider is still the encrypted file. `deadline` (a `time.monotonic()` value) is
checked between pages; `bot.capabilities.reading.documents` runs this in a worker thread.
"""

from __future__ import annotations

import io
import logging
import time
import warnings
from typing import TYPE_CHECKING

from bot.capabilities.reading.attachment_files import UnreadableFile
from providers.types import DocumentPart

if TYPE_CHECKING:
    from pypdf import PdfReader

MAX_PDF_BYTES = 20 * 1024 * 1024
MAX_PDF_PAGES = 100
MAX_PDF_TEXT_BYTES = 500 * 1024  # the extracted text, UTF-8; cut (and marked) beyond
PDF_MEDIA_TYPE = "application/pdf"
# pypdf's own limits for one file of at most MAX_PDF_BYTES (its defaults allow 75 MB a stream).
PDF_LIMITS = {
    "maximum_declared_stream_length": MAX_PDF_BYTES,
    "zlib_maximum_output_length": 30_000_000,
    "lzw_maximum_output_length": 30_000_000,
    "run_length_maximum_output_length": 30_000_000,
    "brotli_maximum_output_length": 30_000_000,
    "jbig2_maximum_output_length": 30_000_000,
    "array_based_stream_maximum_output_length": 30_000_000,
    "stream_decoding_work_maximum_length": 60_000_000,
    "page_tree_maximum_entries": 10_000,
    "page_tree_maximum_page_entries": 200_000,
    "jbig2dec_binary": None,
}

logging.getLogger("pypdf").setLevel(logging.ERROR)  # a warning per odd object of a member's file is noise


def _in_time(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise UnreadableFile("timeout")


def _cut(text: str, limit: int = MAX_PDF_TEXT_BYTES) -> tuple[str, bool]:
    """`text` within `limit` UTF-8 bytes (never half a character), and whether it was cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text, False
    return encoded[:limit].decode("utf-8", errors="ignore"), True


def _page_texts(reader: PdfReader, deadline: float | None) -> list[str]:
    texts, size = [], 0
    for number, page in enumerate(reader.pages, start=1):
        _in_time(deadline)
        text = (page.extract_text() or "").strip()
        texts.append(f"[Page {number}]\n{text}" if text else "")
        size += len(texts[-1])
        if size > MAX_PDF_TEXT_BYTES:  # characters ≥ bytes / 4: the rest would be cut anyway
            break
    return texts


def read_pdf(data: bytes, filename: str, deadline: float | None = None) -> DocumentPart:
    """The PDF as a `DocumentPart`: its bytes, and its text with a `[Page n]` line before each
    page's (None without a text layer; `text_cut` past `MAX_PDF_TEXT_BYTES`). Raises
    `UnreadableFile`: `too_large`, `too_many_pages`, `encrypted`, `unreadable` or `timeout`."""
    if len(data) > MAX_PDF_BYTES:
        raise UnreadableFile("too_large")
    # Imported with the first PDF, in the reading thread: pypdf costs an idle bot ~25 MiB.
    from pypdf import PdfReader, apply_configuration

    try:
        with warnings.catch_warnings(), apply_configuration(**PDF_LIMITS):
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted:
                raise UnreadableFile("encrypted")
            if len(reader.pages) > MAX_PDF_PAGES:
                raise UnreadableFile("too_many_pages")
            texts = _page_texts(reader, deadline)
    except UnreadableFile:
        raise
    except Exception as exc:  # whatever a malformed file makes pypdf raise (its own errors, ValueError...,
        # DeprecationError for a filter name it dropped) is a note naming the file, never a failed question
        raise UnreadableFile("unreadable") from exc
    joined = "\n\n".join(t for t in texts if t)
    if not joined:
        return DocumentPart(PDF_MEDIA_TYPE, data, filename)
    text, cut = _cut(joined)
    return DocumentPart(PDF_MEDIA_TYPE, data, filename, text, cut)
