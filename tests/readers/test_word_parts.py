"""A Word file's text from every place Word keeps it, Strict Open XML included."""

from __future__ import annotations

import pytest

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.office_files import docx_text, xlsx_text
from tests.capabilities.reading.attachments.document_fixtures import xlsx_bytes
from tests.readers.packages import word_package

EVERY_PART = ("Body paragraph.", "Inside a content control.", "Kept inserted words", "Simple Field Result",
              "Complex Field Result", "Text box words.", "| cell one | cell two |", "The footnote text.",
              "The endnote text.", "Running header", "Running footer")


@pytest.mark.parametrize("strict", [False, True], ids=["transitional", "strict"])
def test_every_part_of_a_word_file_is_read_in_reading_order(strict: bool) -> None:
    text = docx_text(word_package(strict=strict), "parts.docx").sections[0].text
    for expected in EVERY_PART:
        assert expected in text, expected
    positions = [text.index(expected) for expected in EVERY_PART]
    assert positions == sorted(positions)
    assert "[Footnotes]\n[1] The footnote text." in text and "Body paragraph.[1]" in text


def test_deleted_text_field_instructions_and_the_text_box_fallback_are_left_out() -> None:
    text = docx_text(word_package(), "parts.docx").sections[0].text
    assert "deleted words" not in text
    assert "DATE" not in text and "AUTHOR" not in text
    assert text.count("Text box words.") == 1 and text.count("Running footer") == 1  # two footers, one text
    assert "\t" not in text  # a paragraph's tab stops are not tabs


def test_a_strict_workbook_is_read() -> None:
    from tests.readers.packages import to_strict
    strict = to_strict(xlsx_bytes({"Prices": [["item", "price"], ["tea", 3]]}))
    sections = xlsx_text(strict, "strict.xlsx").sections
    assert [(s.title, s.text) for s in sections] == [("strict.xlsx, sheet Prices", "item,price\ntea,3\n".strip())]


def test_a_package_without_a_word_document_is_unreadable() -> None:
    with pytest.raises(UnreadableFile) as refused:
        docx_text(xlsx_bytes({"S": [["a"]]}), "book.docx")
    assert refused.value.reason == "unreadable"
