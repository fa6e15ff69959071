"""A Word file's text as lines, from every part a reader would see (pure, no I/O).

The body first, then footnotes, endnotes, comments, and the headers and footers (each distinct one
once), each part after a `[Footnotes]`-style line. Within a part the text stands in
reading order, wherever Word keeps it: paragraphs and table rows (`| cell | cell |`),
content controls (`w:sdt`), text boxes (the DrawingML copy; the VML fallback Word writes
beside it is the same text), tracked insertions (deletions and moved-away text left out),
hyperlinks, and the shown result of simple and complex fields (their instructions left
out). A footnote's mark stands as `[n]` where it is referenced and before its text.

Written on lxml's streaming parser (`bot.capabilities.reading.ooxml`) rather than a Word library:
python-docx reads only the body's paragraphs and tables (no notes, text boxes, content
controls or insertions) and builds each part as a tree of Python objects; docx2python
reads the other parts but also parses each one whole. Neither bounds what a small file of
millions of elements costs, and this walk holds one branch of the tree at a time.
Strict Open XML files are read as they are: both namespaces are known.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.ooxml import XmlBudget, member, relationships, stream

WORD_NAMESPACES = ("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}",
                   "{http://purl.oclc.org/ooxml/wordprocessingml/main}")
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
# Elements whose insides are not shown text: deleted and moved-away runs, field
# instructions, and properties (a paragraph's `w:tabs` holds `w:tab` stops, not tabs).
SKIPPED = frozenset({"del", "moveFrom", "instrText", "delText", "delInstrText", "pPr", "rPr",
                     "tblPr", "trPr", "tcPr", "tblGrid", "sectPr", "sdtPr", "sdtEndPr"})
NOTE_SEPARATORS = frozenset({"separator", "continuationSeparator", "continuationNotice"})
SECTIONS = (("footnotes", "[Footnotes]"), ("endnotes", "[Endnotes]"), ("comments", "[Comments]"))
HEADERS = ("header", "footer")
RUN_MARKS = {"tab": "\t", "noBreakHyphen": "-", "cr": "\n"}


def _word_name(tag: Any) -> str:
    """The local name of a WordprocessingML element, "" for any other."""
    text = str(tag)
    for namespace in WORD_NAMESPACES:
        if text.startswith(namespace):
            return text[len(namespace):]
    return ""


def _attribute(element: Any, name: str) -> str | None:
    for namespace in WORD_NAMESPACES:
        value = element.get(f"{namespace}{name}")
        if value is not None:
            return value
    return None


class _Part:
    """The lines of one part as its elements stream past: open paragraphs (a text box's
    paragraphs stand inside another's), open table cells and rows."""

    def __init__(self) -> None:
        self.paragraphs: list[list[str]] = []
        self.cells: list[list[str]] = []
        self.rows: list[list[str]] = []
        self.out: list[str] = []
        self.note: str | None = None  # a footnote's number, until its first paragraph has it

    def deliver(self, line: str) -> None:
        (self.cells[-1] if self.cells else self.out).append(line)

    def start(self, name: str, element: Any) -> None:
        if name == "p":
            self.paragraphs.append([f"[{self.note}] "] if self.note else [])
            self.note = None
        elif name == "tc":
            self.cells.append([])
        elif name == "tr":
            self.rows.append([])
        elif name in ("footnote", "endnote"):
            self.note = _attribute(element, "id")

    def end(self, name: str, element: Any) -> None:
        runs = self.paragraphs[-1] if self.paragraphs else None
        if name == "t" and runs is not None:
            runs.append(element.text or "")
        elif name in RUN_MARKS and runs is not None:
            runs.append(RUN_MARKS[name])
        elif name == "br" and runs is not None and _attribute(element, "type") in (None, "textWrapping"):
            runs.append("\n")
        elif name in ("footnoteReference", "endnoteReference") and runs is not None:
            runs.append(f"[{_attribute(element, 'id')}]")
        elif name == "p" and runs is not None:
            self.deliver("".join(self.paragraphs.pop()))
        elif name == "tc" and self.cells:
            cell = " ".join(" ".join(self.cells.pop()).split())
            if self.rows:
                self.rows[-1].append(cell)
        elif name == "tr" and self.rows:
            self.deliver("| " + " | ".join(self.rows.pop()) + " |")
        elif name == "tbl" and not self.cells:
            self.out.append("")


def _skipped(name: str, element: Any) -> bool:
    if name in SKIPPED or element.tag == MC_FALLBACK:
        return True
    return name in ("footnote", "endnote") and _attribute(element, "type") in NOTE_SEPARATORS


def part_lines(xml: bytes, budget: XmlBudget, root: str | None = None) -> Iterator[str]:
    """The shown text of one WordprocessingML part, line by line (a table's rows, then an
    empty line); `root`, when given, is the local name its root element must have."""
    part, skipping, first = _Part(), 0, True
    for event, element in stream(xml, budget):
        name = _word_name(element.tag)
        if first and root is not None and name != root:
            raise UnreadableFile("unreadable")  # not a Word document: a workbook named .docx
        first = False
        if event == "start":
            if skipping or _skipped(name, element):
                skipping += 1
            else:
                part.start(name, element)
        elif skipping:
            skipping -= 1
        else:
            part.end(name, element)
        if part.out:
            yield from part.out
            part.out.clear()


def _section(title: str, lines: Iterable[str]) -> Iterator[str]:
    """`lines` after an empty line and `title`, when any of them holds text."""
    pending: list[str] = []
    for line in lines:
        if pending or line.strip():
            if not pending:
                pending = ["", title]
                yield from pending
            yield line


def docx_lines(archive: zipfile.ZipFile, budget: XmlBudget) -> Iterator[str]:
    """Every part's text in reading order: the body, notes, then each distinct header and
    footer once."""
    main = next((path for kind, path in relationships(archive, "", budget) if kind == "officeDocument"),
                "word/document.xml")
    body = member(archive, main)
    if body is None:
        raise UnreadableFile("unreadable")
    yield from part_lines(body, budget, root="document")
    related = relationships(archive, main, budget)
    for kind, title in SECTIONS:
        for path in (p for k, p in related if k == kind):
            yield from _section(title, part_lines(member(archive, path) or b"<w/>", budget))
    seen: set[str] = set()
    kept: list[str] = []
    for path in (p for k, p in related if k in HEADERS):
        text = "\n".join(part_lines(member(archive, path) or b"<w/>", budget)).strip()
        if text and text not in seen:
            seen.add(text)
            kept.append(text)
    yield from _section("[Headers and footers]", kept)
