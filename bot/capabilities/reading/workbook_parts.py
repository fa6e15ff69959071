"""The parts of an .xlsx that openpyxl reads, counted before it reads them (pure, no I/O).

openpyxl parses the workbook, shared strings, styles and theme whole, as Python objects
(a 3.8 MB workbook of tiny elements grew the process by 966 MB), and each row it streams
is built whole, however many cells it has. So before openpyxl opens the file, those
parts, and each sheet up to the row after the last one read, are streamed through
`bot.capabilities.reading.ooxml` and the file is refused as `too_complex` past its bounds; the count
costs one pass of lxml over markup that openpyxl would parse anyway. A Strict Open XML
workbook is handed on in Transitional namespaces, which openpyxl reads.
"""

from __future__ import annotations

import io
import re
import zipfile

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.ooxml import (
    MAX_XML_ELEMENTS,
    XmlBudget,
    is_strict,
    member,
    relationships,
    stream,
    transitional,
)

WHOLE_PARTS = frozenset({"sharedStrings", "styles", "theme"})  # openpyxl's load reads these whole
WHOLE_TYPES = ("sharedStrings", "styles", "theme", ".main+xml")  # content types of such parts, and workbooks'
STYLES = "xl/styles.xml"  # where openpyxl reads the styles, whatever the relationships say
CONTENT_TYPES = "[Content_Types].xml"
ROW_TAG = "}row"
ROW_END = re.compile(rb"</(?:[\w.-]+:)?row>")


def _rows_end(xml: bytes, rows: int) -> int:
    """Where the sheet's first `rows` rows end (its end when it has fewer)."""
    for number, closing in enumerate(ROW_END.finditer(xml), start=1):
        if number >= rows:
            return closing.end()
    return len(xml)


def _scan(xml: bytes | None, budget: XmlBudget, rows: int | None = None) -> None:
    """Stream `xml` against `budget`; with `rows`, stop after that many rows ended (their
    tags counted first at the speed of a byte search, as `stream` counts a whole part's)."""
    xml = xml or b"<x/>"
    if rows is not None:
        head = xml[:_rows_end(xml, rows)]
        if budget.elements + head.count(b"<") - head.count(b"</") > MAX_XML_ELEMENTS:
            raise UnreadableFile("too_complex")
    ended = 0
    try:
        for event, element in stream(xml, budget, whole=rows is None):
            if rows is not None and event == "end" and str(element.tag).endswith(ROW_TAG):
                ended += 1
                if ended >= rows:
                    return
    except UnreadableFile as broken:  # broken markup is openpyxl's to judge (it may not read
        if broken.reason != "unreadable":  # the part at all); only a bound ends the count here
            raise


def _typed_parts(archive: zipfile.ZipFile, budget: XmlBudget) -> set[str]:
    """The parts [Content_Types].xml names as a workbook, shared strings, styles or theme:
    openpyxl finds the workbook and the shared strings there, not by relationship."""
    found: set[str] = set()
    for event, element in stream(member(archive, CONTENT_TYPES) or b"<x/>", budget):
        if event == "end" and str(element.tag).endswith("}Override"):
            kind = element.get("ContentType") or ""
            if any(word in kind for word in WHOLE_TYPES):
                found.add((element.get("PartName") or "").lstrip("/"))
    return found


def checked_workbook(data: bytes, rows: int, deadline: float | None) -> bytes:
    """`data` for openpyxl once its parts are within bounds (Strict rewritten to
    Transitional); `rows`: how many rows of a sheet openpyxl will be asked for."""
    budget = XmlBudget(deadline)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        strict = is_strict(archive)
        whole = _typed_parts(archive, budget) | {STYLES}
        mains = whole | {path for kind, path in relationships(archive, "", budget) if kind == "officeDocument"}
        sheets: set[str] = set()
        for main in sorted(mains):
            for kind, path in relationships(archive, main, budget):
                if kind in WHOLE_PARTS:
                    whole.add(path)
                elif kind == "worksheet":
                    sheets.add(path)
        for path in sorted(whole | mains):
            _scan(member(archive, path), budget)
        for path in sorted(sheets):
            _scan(member(archive, path), budget, rows)
    return transitional(data) if strict else data
