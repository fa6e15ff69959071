"""Word and Excel files read to text (pure, no I/O): a .docx's text from every part, in
reading order (`bot.capabilities.reading.word_text`), an .xlsx's first sheets as CSV.

Both are zip files of XML, and a few kilobytes of zip can unpack to gigabytes. Before
either is parsed, its zip directory is read (cheap: no member is inflated) and the file
is refused when its members would unpack to more than `MAX_UNPACKED_BYTES` or there are
more than `MAX_ZIP_MEMBERS`. Python's zipfile never inflates a member past the size its
directory states, so a directory that lies yields a broken file, not a bomb. Within that,
the XML is bounded too (`bot.capabilities.reading.ooxml`: elements, depth, attributes), since 20 MB of
tiny elements built as trees of Python objects grew the process by hundreds of megabytes:
a Word file is streamed, never built whole; a workbook's parts are counted before
openpyxl opens it (`bot.capabilities.reading.workbook_parts`), which then reads it in read-only mode,
its sheets streamed row by row and stopped after `MAX_ROWS`. Entities are never expanded
(lxml is told not to; openpyxl parses with the expat Python ships, whose amplification
limits stop a "billion laughs" file). Strict Open XML files are read like the others.

`deadline` is a `time.monotonic()` value checked every few thousand elements and between
rows and sheets: a file that takes longer is refused rather than left holding its worker.
"""

from __future__ import annotations

import csv
import datetime
import io
import time
import warnings
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.capabilities.reading.attachment_files import MAX_TEXT_BYTES, UnreadableFile
from bot.capabilities.reading.ooxml import XmlBudget
from bot.capabilities.reading.word_text import docx_lines
from bot.capabilities.reading.workbook_parts import checked_workbook

MAX_DOCUMENT_BYTES = 10 * 1024 * 1024  # a .docx or .xlsx as downloaded, refused before downloading
MAX_UNPACKED_BYTES = 20 * 1024 * 1024  # all its members as its zip directory states them
MAX_ZIP_MEMBERS = 2000
MAX_SHEETS = 3
MAX_ROWS = 200
MAX_COLUMNS = 50
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office wraps a password-protected .docx/.xlsx in one
CUT_MARK = "[… the rest was cut: documents are read up to {kilobytes} KB of text]"


@dataclass(frozen=True, slots=True)
class Section:
    """One fenced block for the model: its title (the file, or the file and a sheet), the
    fence's language tag and the text."""

    title: str
    language: str
    text: str


@dataclass(frozen=True, slots=True)
class OfficeText:
    """What a Word or Excel file gave; `cut` when the bounds left part of it out."""

    sections: list[Section]
    cut: bool


def _in_time(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise UnreadableFile("timeout")


def check_zip(data: bytes) -> None:
    """Refuse from the zip directory alone: too large a file, too much unpacked, too many
    members, or not a zip at all (a password-protected Office file is an OLE container)."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise UnreadableFile("too_large")
    if data.startswith(OLE_SIGNATURE):
        raise UnreadableFile("encrypted")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise UnreadableFile("unreadable") from exc
    if len(members) > MAX_ZIP_MEMBERS or sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
        raise UnreadableFile("too_large")


class _Budget:
    """Lines kept until their UTF-8 size reaches `limit`; the line that crosses it is kept up
    to the limit (a workbook's one long cell is shown in part, not dropped), the rest
    dropped and marked."""

    def __init__(self, limit: int = MAX_TEXT_BYTES) -> None:
        self.left = limit
        self.cut = False

    def take(self, line: str) -> str | None:
        if self.cut:
            return None
        encoded = line.encode("utf-8")
        if len(encoded) + 1 > self.left:
            self.cut = True
            head = encoded[:max(0, self.left - 1)].decode("utf-8", errors="ignore")
            self.left = 0
            return head or None
        self.left -= len(encoded) + 1
        return line


def _kept(lines: Iterable[str], budget: _Budget) -> str:
    kept: list[str] = []
    for line in lines:
        taken = budget.take(line)
        if taken is not None:
            kept.append(taken)
        if budget.cut:
            break
    return "\n".join(kept).strip("\n")


def docx_text(data: bytes, filename: str, deadline: float | None = None) -> OfficeText:
    """A .docx's text in reading order (`bot.capabilities.reading.word_text`: body, notes, headers and
    footers; a table as one `| cell | cell |` line a row), up to `MAX_TEXT_BYTES`."""
    check_zip(data)
    budget = _Budget()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            text = _kept(docx_lines(archive, XmlBudget(deadline)), budget)
    except UnreadableFile:
        raise
    except Exception as exc:  # whatever a broken file makes zipfile or lxml raise, named as unreadable
        raise UnreadableFile("unreadable") from exc
    if budget.cut:
        text += "\n" + CUT_MARK.format(kilobytes=MAX_TEXT_BYTES // 1024)
    return OfficeText([Section(filename, "", text)], budget.cut)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _trimmed(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Trailing empty cells and trailing empty rows dropped."""
    out = [list(row) for row in rows]
    for row in out:
        while row and row[-1] == "":
            row.pop()
    while out and not out[-1]:
        out.pop()
    return out


def _sheet_csv(sheet: Any, deadline: float | None) -> tuple[str, bool]:
    """The sheet's first `MAX_ROWS` rows of `MAX_COLUMNS` columns as CSV, and whether it has
    more (one row and one column past the bounds are read to tell). Rows stop once their
    cells hold `MAX_TEXT_BYTES` characters: one long shared string shown in every cell must
    not be copied hundreds of times before the text budget cuts it."""
    rows: list[list[str]] = []
    cut, size = False, 0
    for number, values in enumerate(sheet.iter_rows(max_row=MAX_ROWS + 1, max_col=MAX_COLUMNS + 1,
                                                     values_only=True), start=1):
        _in_time(deadline)
        cells = [_cell(v)[:MAX_TEXT_BYTES] for v in values]
        if number > MAX_ROWS or size > MAX_TEXT_BYTES:
            cut = cut or any(cells)
            break
        cut = cut or any(cells[MAX_COLUMNS:])
        rows.append(cells[:MAX_COLUMNS])
        size += sum(len(cell) for cell in rows[-1])
    stated = sheet.max_row  # the sheet's own dimension, when it states one
    cut = cut or (isinstance(stated, int) and stated > MAX_ROWS)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(_trimmed(rows))
    return out.getvalue(), cut


def xlsx_text(data: bytes, filename: str, deadline: float | None = None) -> OfficeText:
    """An .xlsx's first `MAX_SHEETS` sheets, each its first `MAX_ROWS` rows and `MAX_COLUMNS`
    columns as CSV (the values Excel last showed, not formulas), up to `MAX_TEXT_BYTES` in all."""
    check_zip(data)
    sections: list[Section] = []
    budget = _Budget()
    try:
        data = checked_workbook(data, MAX_ROWS + 1, deadline)
        import openpyxl  # with the first .xlsx, in the reading thread: an idle bot does not carry it

        with warnings.catch_warnings():  # openpyxl warns about styles and extensions it skips
            warnings.simplefilter("ignore")
            workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            try:
                sheets = workbook.worksheets
                cut = len(sheets) > MAX_SHEETS
                for sheet in sheets[:MAX_SHEETS]:
                    _in_time(deadline)
                    text, sheet_cut = _sheet_csv(sheet, deadline)
                    kept = _kept(text.split("\n"), budget)
                    cut = cut or sheet_cut or budget.cut
                    if budget.cut:
                        kept += "\n" + CUT_MARK.format(kilobytes=MAX_TEXT_BYTES // 1024)
                    sections.append(Section(f"{filename}, sheet {sheet.title}", "csv", kept))
                    if budget.cut:
                        break
            finally:
                workbook.close()
    except UnreadableFile:
        raise
    except Exception as exc:  # openpyxl raises many kinds on a broken workbook
        raise UnreadableFile("unreadable") from exc
    return OfficeText(sections, cut)
