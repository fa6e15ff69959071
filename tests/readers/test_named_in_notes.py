"""Through the real LLMBot: a Word file past the element bound and a PDF pypdf cannot read
are named in the member's note and the model's words; the question is still answered."""

from __future__ import annotations

from tests.capabilities.reading.attachments.document_fixtures import (
    DOCX_TYPE,
    XLSX_TYPE,
    docx_bytes,
    xlsx_bytes,
)
from tests.capabilities.reading.attachments.test_attachments_e2e import (
    notes,
    run_question,
    texts_sent,
)
from tests.readers.test_bounded_parsing import HOSTILE_WORD, _document
from tests.readers.test_pdf_errors import fuzzed_pdf
from tests.support.fake_discord_server import FakeDiscord, UserFile
from tests.support.fake_provider_server import ProviderReplayServer


async def test_a_bomb_and_a_fuzzed_pdf_are_named_and_the_question_answered(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    files = [UserFile("runs.docx", _document(HOSTILE_WORD["tiny_elements"]), DOCX_TYPE),
             UserFile("fuzzed.pdf", fuzzed_pdf(), "application/pdf")]
    body = await run_question(fake_discord, provider_server, family_bot("openai"), "openai", files)
    sent = texts_sent("openai", body)
    assert "runs.docx was not read: the file holds too many elements to read" in sent
    assert "fuzzed.pdf was not read: the PDF could not be read" in sent
    [note] = notes(fake_discord)
    assert note.content.split("\n") == [
        "-# runs.docx was not read: it holds more elements or attributes than a Word or Excel file is read with.",
        "-# fuzzed.pdf was not read: it is not a PDF that can be opened.",
    ]


async def test_a_document_without_text_is_named_not_sent_as_an_empty_block(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    files = [UserFile("pictures.docx", docx_bytes([]), DOCX_TYPE),
             UserFile("blank.xlsx", xlsx_bytes({"Sheet": []}), XLSX_TYPE)]
    body = await run_question(fake_discord, provider_server, family_bot("openai"), "openai", files)
    sent = texts_sent("openai", body)
    assert "File: pictures.docx" not in sent and "File: blank.xlsx" not in sent
    assert "pictures.docx was not read: the file holds no text" in sent
    [note] = notes(fake_discord)
    assert note.content.split("\n") == [
        "-# pictures.docx was not read: it holds no text (only images, charts or drawings, if anything).",
        "-# blank.xlsx was not read: it holds no text (only images, charts or drawings, if anything).",
    ]
