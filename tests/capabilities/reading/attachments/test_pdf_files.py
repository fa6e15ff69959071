"""A PDF as a DocumentPart: its bytes and its text layer, or refused with why."""

from __future__ import annotations

import time

import pytest

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.pdf_files import (
    MAX_PDF_BYTES,
    MAX_PDF_PAGES,
    MAX_PDF_TEXT_BYTES,
    read_pdf,
)
from providers.types import DocumentPart
from tests.capabilities.reading.attachments.document_fixtures import encrypted, pdf_bytes

PAGES = ["Cover page.", "Contents.", "The third page says the treaty was signed in 1648.",
         "Appendix A.", "Index."]


def test_a_five_page_pdf_keeps_its_bytes_and_its_text_page_by_page() -> None:
    data = pdf_bytes(PAGES)
    part = read_pdf(data, "treaty.pdf")
    assert isinstance(part, DocumentPart)
    assert (part.media_type, part.data, part.filename, part.text_cut) == ("application/pdf", data, "treaty.pdf",
                                                                          False)
    assert part.text is not None and "The third page says the treaty was signed in 1648." in part.text
    assert "[Page 3]\nThe third page says" in part.text and part.text.index("[Page 5]") > part.text.index("1648")


def test_a_pdf_without_a_text_layer_has_no_text() -> None:
    part = read_pdf(pdf_bytes([None, None, None]), "scan.pdf")
    assert part.text is None and part.text_cut is False and part.data.startswith(b"%PDF")


def test_long_text_is_cut_at_its_bound_and_marked() -> None:
    page = "All work and no play makes Jack a dull boy. " * 250  # 11 KB a page
    part = read_pdf(pdf_bytes([page] * 60), "long.pdf")
    assert part.text_cut is True and part.text is not None
    assert MAX_PDF_TEXT_BYTES - 100 < len(part.text.encode()) <= MAX_PDF_TEXT_BYTES


@pytest.mark.parametrize("data,reason", [
    (pdf_bytes(["page"] * (MAX_PDF_PAGES + 1)), "too_many_pages"),
    (pdf_bytes(["big"]) + b"%" + b"0" * MAX_PDF_BYTES, "too_large"),
    (encrypted(pdf_bytes(PAGES)), "encrypted"),
    (encrypted(pdf_bytes(PAGES), password=""), "encrypted"),  # only forbids printing: still encrypted bytes
    (b"%PDF-1.4\nthis is not a pdf at all", "unreadable"),
    (b"", "unreadable"),
])
def test_pdfs_over_a_bound_encrypted_or_broken_are_refused_with_why(data: bytes, reason: str) -> None:
    with pytest.raises(UnreadableFile) as refused:
        read_pdf(data, "doc.pdf")
    assert refused.value.reason == reason


def test_a_hundred_pages_are_read() -> None:
    part = read_pdf(pdf_bytes([f"page {i}" for i in range(1, MAX_PDF_PAGES + 1)]), "hundred.pdf")
    assert part.text is not None and "page 100" in part.text


def test_a_reader_past_its_deadline_gives_up() -> None:
    with pytest.raises(UnreadableFile) as refused:
        read_pdf(pdf_bytes(PAGES), "late.pdf", deadline=time.monotonic() - 1)
    assert refused.value.reason == "timeout"
