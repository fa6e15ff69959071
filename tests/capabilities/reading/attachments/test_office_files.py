"""Word and Excel files read to text (pure): order, bounds, and what is refused before any
member is inflated."""

from __future__ import annotations

import time

import pytest

from bot.capabilities.reading.attachment_files import MAX_TEXT_BYTES, UnreadableFile
from bot.capabilities.reading.office_files import (
    MAX_COLUMNS,
    MAX_ROWS,
    MAX_SHEETS,
    MAX_UNPACKED_BYTES,
    OLE_SIGNATURE,
    check_zip,
    docx_text,
    xlsx_text,
)
from tests.capabilities.reading.attachments.document_fixtures import (
    docx_bytes,
    with_member,
    xlsx_bytes,
)

SHEET_HEAD = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
SHEET_TAIL = b"</sheetData></worksheet>"


def zip_bomb_docx() -> bytes:
    """A real .docx whose document.xml inflates to 64 MB of blanks (about 64 KB in the zip)."""
    return with_member(docx_bytes(["harmless"]), "word/document.xml", 64)


def huge_xlsx() -> bytes:
    """A real .xlsx whose first sheet has a million rows (33 MB of XML, a few hundred KB zipped)."""
    rows = b"<row><c><v>7</v></c></row>" * 1000
    return with_member(xlsx_bytes({"Data": [["x"]]}), "xl/worksheets/sheet1.xml", 1000, rows,
                       SHEET_HEAD, SHEET_TAIL)


def test_docx_paragraphs_and_tables_stand_in_order_a_table_as_rows_of_cells() -> None:
    data = docx_bytes(["Quarterly report", "Sales rose."], [["Region", "Q1"], ["North", "12"]], ["Thanks."])
    read = docx_text(data, "report.docx")
    [section] = read.sections
    assert section.title == "report.docx" and section.language == ""
    assert section.text == "Quarterly report\nSales rose.\n| Region | Q1 |\n| North | 12 |\n\nThanks."
    assert read.cut is False


def test_docx_text_is_cut_at_the_text_files_cap_and_says_so() -> None:
    paragraph = "word " * 200  # 1 KB
    read = docx_text(docx_bytes([paragraph] * 150), "long.docx")
    [section] = read.sections
    assert read.cut is True
    assert len(section.text.encode()) <= MAX_TEXT_BYTES + 200
    assert section.text.endswith("[… the rest was cut: documents are read up to 100 KB of text]")


def test_xlsx_first_sheets_rows_and_columns_as_csv() -> None:
    wide = [[f"r{r}c{c}" for c in range(1, MAX_COLUMNS + 6)] for r in range(1, MAX_ROWS + 51)]
    data = xlsx_bytes({"Wide": wide, "Prices": [["item", "price"], ["tea, green", 2.5], ["rice", 3]],
                       "Third": [["x"]], "Fourth": [["never read"]]})
    read = xlsx_text(data, "book.xlsx")
    assert [s.title for s in read.sections] == ["book.xlsx, sheet Wide", "book.xlsx, sheet Prices",
                                                "book.xlsx, sheet Third"]
    assert len(read.sections) == MAX_SHEETS and read.cut is True
    assert all(s.language == "csv" for s in read.sections)
    wide_lines = read.sections[0].text.split("\n")
    assert len(wide_lines) == MAX_ROWS
    assert wide_lines[0].split(",") == [f"r1c{c}" for c in range(1, MAX_COLUMNS + 1)]
    assert wide_lines[-1].startswith(f"r{MAX_ROWS}c1,") and "never read" not in str(read)
    assert read.sections[1].text == 'item,price\n"tea, green",2.5\nrice,3'


def test_a_small_workbook_is_not_marked_cut() -> None:
    read = xlsx_text(xlsx_bytes({"Only": [["a", "b"], [1, None, None], [None, None]]}), "small.xlsx")
    assert read.cut is False and [s.text for s in read.sections] == ["a,b\n1"]


def test_a_zip_bomb_docx_is_refused_from_its_directory_at_once() -> None:
    bomb = zip_bomb_docx()
    assert len(bomb) < 200 * 1024  # 64 MB unpacked
    started = time.monotonic()
    with pytest.raises(UnreadableFile) as refused:
        docx_text(bomb, "bomb.docx")
    assert refused.value.reason == "too_large"
    assert time.monotonic() - started < 0.5  # nothing was inflated


def test_a_huge_xlsx_is_refused_before_it_is_opened() -> None:
    data = huge_xlsx()
    with pytest.raises(UnreadableFile) as refused:
        xlsx_text(data, "huge.xlsx")
    assert refused.value.reason == "too_large"


def test_a_zip_within_the_bound_passes_the_directory_check() -> None:
    check_zip(with_member(docx_bytes(["x"]), "word/media/blank.bin", MAX_UNPACKED_BYTES // (1024 * 1024) - 1))


@pytest.mark.parametrize("data,reason", [
    (OLE_SIGNATURE + b"\x00" * 512, "encrypted"),  # Office's wrapper of a password-protected file
    (b"PK\x03\x04 not really a zip", "unreadable"),
    (b"hello", "unreadable"),
])
def test_protected_and_broken_files_are_refused_with_why(data: bytes, reason: str) -> None:
    for read in (docx_text, xlsx_text):
        with pytest.raises(UnreadableFile) as refused:
            read(data, "file")
        assert refused.value.reason == reason


def test_a_docx_named_xlsx_is_unreadable() -> None:
    with pytest.raises(UnreadableFile) as refused:
        xlsx_text(docx_bytes(["not a workbook"]), "fake.xlsx")
    assert refused.value.reason == "unreadable"


def test_a_reader_past_its_deadline_gives_up() -> None:
    for read, data in ((docx_text, docx_bytes(["a"])), (xlsx_text, xlsx_bytes({"S": [["a"]]}))):
        with pytest.raises(UnreadableFile) as refused:
            read(data, "late", deadline=time.monotonic() - 1)
        assert refused.value.reason == "timeout"
