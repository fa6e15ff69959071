"""Word, Excel, CSV and TSV files through the real LLMBot: the fake Discord serves the
member's files, the replay provider records the text blocks the model was sent."""

from __future__ import annotations

import base64

import pytest

from tests.capabilities.reading.attachments.document_fixtures import (
    DOCX_TYPE,
    XLSX_TYPE,
    docx_bytes,
    pdf_bytes,
    xlsx_bytes,
)
from tests.capabilities.reading.attachments.test_attachments_e2e import (
    last_turn,
    notes,
    run_question,
    texts_sent,
)
from tests.capabilities.reading.attachments.test_office_files import huge_xlsx, zip_bomb_docx
from tests.support.fake_discord_server import FakeDiscord, UserFile
from tests.support.fake_provider_server import ProviderReplayServer

FILES = {
    "docx": (UserFile("plan.docx", docx_bytes(["Launch plan", "Ship on Monday."], [["Task", "Owner"],
                                                                                   ["Docs", "Aiko"]]), DOCX_TYPE),
             "Attached file:\nFile: plan.docx\n```\nLaunch plan\nShip on Monday.\n| Task | Owner |\n"
             "| Docs | Aiko |\n```"),
    "xlsx": (UserFile("budget.xlsx", xlsx_bytes({"Costs": [["item", "eur"], ["rent", 900]],
                                                  "Notes": [["ok"]]}), None),
             "Attached file:\nFile: budget.xlsx, sheet Costs\n```csv\nitem,eur\nrent,900\n```\n\n"
             "File: budget.xlsx, sheet Notes\n```csv\nok\n```"),
    "csv": (UserFile("scores.csv", b"name,score\nmika,9\n", "text/csv; charset=utf-8"),
            "Attached file:\nFile: scores.csv\n```csv\nname,score\nmika,9\n```"),
    "tsv": (UserFile("scores.tsv", b"name\tscore\nmika\t9\n", "text/tab-separated-values"),
            "Attached file:\nFile: scores.tsv\n```\nname\tscore\nmika\t9\n```"),
}


@pytest.mark.parametrize("kind", sorted(FILES))
async def test_office_and_data_files_reach_the_model_as_text_blocks(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot, kind: str) -> None:
    upload, block = FILES[kind]
    body = await run_question(fake_discord, provider_server, family_bot("anthropic"), "anthropic", [upload],
                              text="summarize")
    parts = last_turn("anthropic", body)
    assert all(p["type"] == "text" for p in parts)
    assert parts[0]["text"].endswith(block) and parts[-1]["text"] == "summarize"
    assert notes(fake_discord) == []


async def test_a_zip_bomb_and_a_huge_sheet_are_named_in_the_note(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    files = [UserFile("bomb.docx", zip_bomb_docx(), DOCX_TYPE), UserFile("huge.xlsx", huge_xlsx(), XLSX_TYPE),
             UserFile("locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), DOCX_TYPE)]
    body = await run_question(fake_discord, provider_server, family_bot("openai"), "openai", files)
    sent = texts_sent("openai", body)
    assert "bomb.docx was not read: the file is too large" in sent
    assert "huge.xlsx was not read: the file is too large" in sent
    assert "locked.docx was not read: the file is password-protected" in sent
    [note] = notes(fake_discord)
    assert note.content.split("\n") == [
        "-# bomb.docx was not read: Word and Excel files are read up to 10 MB, and 20 MB unpacked.",
        "-# huge.xlsx was not read: Word and Excel files are read up to 10 MB, and 20 MB unpacked.",
        "-# locked.docx was not read: it is password-protected.",
    ]


async def test_a_large_workbook_is_read_in_part_and_the_note_says_the_bounds(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    rows = [[f"row {r}", r] for r in range(1, 1001)]
    upload = UserFile("log.xlsx", xlsx_bytes({"A": rows, "B": [[1]], "C": [[2]], "D": [[3]]}), XLSX_TYPE)
    body = await run_question(fake_discord, provider_server, family_bot("google"), "google", [upload])
    sent = texts_sent("google", body)
    assert "row 200,200" in sent and "row 201" not in sent and "sheet C" in sent and "sheet D" not in sent
    assert "was not read" not in sent
    [note] = notes(fake_discord)
    assert note.content == ("-# log.xlsx was read in part: the first 3 sheets are read, 200 rows and 50 columns "
                            "of each, up to 100 KB of text.")


async def test_word_and_excel_files_count_as_text_files(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    files = [UserFile(f"part{i}.docx", docx_bytes([f"part {i}"]), DOCX_TYPE) for i in range(3)]
    files.append(UserFile("extra.xlsx", xlsx_bytes({"S": [["x"]]}), XLSX_TYPE))
    body = await run_question(fake_discord, provider_server, family_bot("openai"), "openai", files)
    sent = texts_sent("openai", body)
    assert all(f"part {i}" in sent for i in range(3))
    assert "extra.xlsx was not read: too many files were attached" in sent
    assert len(fake_discord.downloads) == 3


async def test_an_oversized_document_is_refused_from_its_size_without_downloading(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    big = UserFile("thesis.docx", docx_bytes(["x"]), DOCX_TYPE)
    big.size = 11 * 1024 * 1024
    body = await run_question(fake_discord, provider_server, family_bot("openai"), "openai", [big])
    assert "thesis.docx was not read: the file is too large" in texts_sent("openai", body)
    assert fake_discord.downloads == []


@pytest.mark.parametrize("provider", ["anthropic", "google", "openai"])
async def test_an_attached_pdf_reaches_each_family_in_its_own_form(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot, provider: str) -> None:
    """Claude gets a document block, Gemini inline PDF data, and an OpenAI model that does
    not read files (this one) the PDF's text as a fenced block."""
    pdf = pdf_bytes(["Hello from the paper."])
    upload = UserFile("paper.pdf", pdf, "application/pdf")
    parts = last_turn(provider, await run_question(fake_discord, provider_server, family_bot(provider), provider,
                                                   [upload]))
    data = base64.b64encode(pdf).decode()
    if provider == "anthropic":
        [document] = [p for p in parts if p.get("type") == "document"]
        assert document["source"] == {"type": "base64", "media_type": "application/pdf", "data": data}
        assert document["title"] == "paper.pdf"
    elif provider == "google":
        [inline] = [p["inlineData"] for p in parts if "inlineData" in p]
        assert inline == {"mimeType": "application/pdf", "data": data}
    else:
        text = "\n".join(p.get("text", "") for p in parts)
        assert "Document paper.pdf:" in text and "Hello from the paper." in text
        assert not any(p.get("type") in ("file", "input_file") for p in parts)
