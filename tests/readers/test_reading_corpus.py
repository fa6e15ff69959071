"""The kept real-world documents (tests/fixtures/documents, SOURCES.md): every one read to
text or named in a note, nothing else raised, each within a second or two; and the text
main's readers lost (notes, comments, fields, content controls, Strict files, one long
shared string) is there."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.office_files import docx_text, xlsx_text
from bot.capabilities.reading.pdf_files import read_pdf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
FILES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".docx", ".xlsx", ".pdf"))
MAX_SECONDS = 2.0
# File -> words its text must hold (None: a note is expected, the file is broken or hostile).
EXPECTED: dict[str, str | None] = {
    "footnotes.docx": "[1]  snoska",
    "endnotes.docx": "Nepalese name",
    "comment.docx": "This is the first line",
    "FldSimple.docx": "FldSimple.docx",
    "Bug54771a.docx": "Test Subtitle",
    "delins.docx": "Tika can be",
    "ExternalEntityInText.docx": "Here should not be the POI web site",
    "clusterfuzz-testcase-minimized-POIXWPFFuzzer-5313273089884160.docx": None,
    "SimpleStrict.xlsx": "This is sheet 2",
    "sample.strict.xlsx": "Lorem,111",
    "poc-shared-strings.xlsx": "ffffffffIIIIIIII",
    "xlsx-corrupted.xlsx": "test,DOCTYPE,XXE,injection",  # a broken _rels/.rels openpyxl never reads
    "poc-xmlbomb.xlsx": None,
    "clusterfuzz-testcase-minimized-POIXSSFFuzzer-6123461607817216.xlsx": None,
    "toy.pdf": "Single quote operator",
    "issue-297.pdf": "test example",
    "inkscape-abc.pdf": "A",
}


def read(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".pdf":
        return read_pdf(data, path.name).text or ""
    office = (docx_text if path.suffix == ".docx" else xlsx_text)(data, path.name)
    return "\n".join(section.text for section in office.sections)


def test_every_kept_file_is_listed() -> None:
    assert sorted(EXPECTED) == sorted(p.name for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_real_file_is_read_or_named_quickly(path: Path) -> None:
    started = time.monotonic()
    expected = EXPECTED[path.name]
    try:
        text = read(path)
    except UnreadableFile as refused:
        assert expected is None, f"{path.name} refused: {refused.reason}"
    else:
        assert expected is not None and expected in text, text[:300]
    assert time.monotonic() - started < MAX_SECONDS
