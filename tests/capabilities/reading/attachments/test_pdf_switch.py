"""The PDF path at the attachments' level: what a question's PDFs become, and the notes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import discord

from bot.capabilities.reading.attachments import Gathered, gather_message, notes_text
from providers.types import DocumentPart, TextPart
from tests.capabilities.reading.attachments.document_fixtures import encrypted, pdf_bytes

_ids = itertools.count(1)


@dataclass
class FakeAttachment:
    """What `gather_message` reads of a discord.Attachment."""

    filename: str
    data: bytes
    content_type: str | None = "application/pdf"
    size: int = -1
    reads: int = 0
    id: int = field(default_factory=lambda: next(_ids))  # a snowflake: each attachment its own

    def __post_init__(self) -> None:
        self.size = len(self.data) if self.size < 0 else self.size

    async def read(self) -> bytes:
        self.reads += 1
        return self.data


@dataclass
class FakeMessage:
    attachments: list[FakeAttachment] = field(default_factory=list)
    flags: discord.MessageFlags = field(default_factory=discord.MessageFlags)  # not a voice message


async def test_pdfs_become_document_parts_two_a_question() -> None:
    gathered = Gathered()
    files = [FakeAttachment(f"doc{i}.pdf", pdf_bytes([f"Document {i}, page one.", "Page two."]))
             for i in range(3)]
    parts = await gather_message(gathered, FakeMessage(files), "Attached")  # type: ignore[arg-type]
    documents = [p for p in parts if isinstance(p, DocumentPart)]
    assert [d.filename for d in documents] == ["doc0.pdf", "doc1.pdf"]
    assert documents[0].data == files[0].data and "Document 0, page one." in (documents[0].text or "")
    assert TextPart("Attached PDF: doc0.pdf") in parts
    assert TextPart("[Attachment doc2.pdf was not read: too many PDFs were attached.]") in parts
    assert files[2].reads == 0
    assert notes_text(gathered.refusals, "en") == "-# doc2.pdf was not read: at most 2 PDFs per question are read."


async def test_pdfs_over_a_bound_encrypted_or_broken_are_named_with_why() -> None:
    big = FakeAttachment("big.pdf", b"%PDF", size=21 * 1024 * 1024)
    files = [FakeAttachment("long.pdf", pdf_bytes(["p"] * 101)), big,
             FakeAttachment("locked.pdf", encrypted(pdf_bytes(["secret"])))]
    second = [FakeAttachment("broken.pdf", b"%PDF-1.7 nothing here", None)]
    gathered = Gathered()
    parts = await gather_message(gathered, FakeMessage(files), "Attached")  # type: ignore[arg-type]
    parts += await gather_message(gathered, FakeMessage(second), "Earlier message's")  # type: ignore[arg-type]
    assert not [p for p in parts if isinstance(p, DocumentPart)]
    assert big.reads == 0
    assert notes_text(gathered.refusals, "en").split("\n") == [
        "-# long.pdf was not read: PDFs are read up to 100 pages.",
        "-# big.pdf was not read: PDFs are read up to 20 MB.",
        "-# locked.pdf was not read: the PDF is password-protected.",
        "-# broken.pdf was not read: it is not a PDF that can be opened.",
    ]
    assert "[Attachment locked.pdf was not read: the PDF is password-protected.]" in [
        p.text for p in parts if isinstance(p, TextPart)]


async def test_a_scan_and_a_long_pdf_are_sent_and_the_member_told() -> None:
    page = "Lorem ipsum dolor sit amet. " * 400
    files = [FakeAttachment("scan.pdf", pdf_bytes([None, None])), FakeAttachment("book.pdf", pdf_bytes([page] * 60))]
    gathered = Gathered()
    parts = await gather_message(gathered, FakeMessage(files), "Attached")  # type: ignore[arg-type]
    scan, book = [p for p in parts if isinstance(p, DocumentPart)]
    assert scan.text is None and book.text_cut is True
    assert not any(isinstance(p, TextPart) and "was not read" in p.text for p in parts)
    assert notes_text(gathered.refusals, "en").split("\n") == [
        "-# scan.pdf has no text layer (a scan?): only models that read PDFs themselves see its content.",
        "-# book.pdf is long: models that do not read PDFs themselves get its first 500 KB of text.",
    ]
    assert "scan.pdf" in notes_text(gathered.refusals, "ja")
