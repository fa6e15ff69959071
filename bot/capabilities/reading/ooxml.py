"""Office Open XML parts read as bounded XML streams (pure, no I/O).

A .docx or .xlsx is a zip of XML parts, and a zip within `MAX_UNPACKED_BYTES` can still
hold millions of tiny elements: a library that builds each part as a tree of Python
objects turned a 63 KB .docx into 716 MB and a 3.8 MB .xlsx into 966 MB. Here a part is
streamed with lxml's `iterparse`, each element dropped once its end is seen, and the whole
file is refused as `too_complex` past `MAX_XML_ELEMENTS` elements, `MAX_XML_DEPTH` levels
or `MAX_ELEMENT_ATTRIBUTES` attributes on one element: what the stream holds stays at
one branch of the tree, and the count stops a file that is all markup and no text long
before the reader's deadline. Entities are never expanded and no DTD is loaded.

Strict Open XML (ISO/IEC 29500 Strict, namespaces under http://purl.oclc.org/ooxml/) is
the same markup in other namespaces: `STRICT_NAMESPACES` maps them to the Transitional
ones the libraries know.
"""

from __future__ import annotations

import io
import posixpath
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.capabilities.reading.attachment_files import UnreadableFile

MAX_XML_ELEMENTS = 400_000  # over every part one file's reader parses
MAX_XML_DEPTH = 128  # Word nests tables and text boxes a few levels; libxml2 allows 256
MAX_ELEMENT_ATTRIBUTES = 256  # the most any element of the schemas carries is a few dozen
DEADLINE_EVERY = 4096  # elements between two looks at the clock
PACKAGE_RELATIONSHIPS = "_rels/.rels"
# Strict namespace -> its Transitional twin (prefixes: relationship types follow the first).
STRICT_NAMESPACES: tuple[tuple[bytes, bytes], ...] = (
    (b"http://purl.oclc.org/ooxml/officeDocument/relationships",
     b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"),
    (b"http://purl.oclc.org/ooxml/officeDocument/sharedTypes",
     b"http://schemas.openxmlformats.org/officeDocument/2006/sharedTypes"),
    (b"http://purl.oclc.org/ooxml/officeDocument/math",
     b"http://schemas.openxmlformats.org/officeDocument/2006/math"),
    (b"http://purl.oclc.org/ooxml/spreadsheetml/main", b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"),
    (b"http://purl.oclc.org/ooxml/wordprocessingml/main",
     b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/drawingml/main", b"http://schemas.openxmlformats.org/drawingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing",
     b"http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"),
)
STRICT_MARK = b"http://purl.oclc.org/ooxml/"


@dataclass(slots=True)
class XmlBudget:
    """What one file's parts may still hold, and when its reader must give up."""

    deadline: float | None
    elements: int = 0

    def count(self, element: Any, depth: int) -> None:
        self.elements += 1
        if (self.elements > MAX_XML_ELEMENTS or depth > MAX_XML_DEPTH
                or len(element.attrib) > MAX_ELEMENT_ATTRIBUTES):
            raise UnreadableFile("too_complex")
        if self.elements % DEADLINE_EVERY == 1 and self.deadline is not None and time.monotonic() > self.deadline:
            raise UnreadableFile("timeout")


def stream(xml: bytes, budget: XmlBudget, *, whole: bool = True) -> Iterator[tuple[str, Any]]:
    """("start" | "end", element) for each element of `xml`, counted against `budget`; an
    element is emptied and dropped after its "end" is yielded, so read it then. `whole`:
    the part will be read to its end, so it is refused at once when its tags alone (every
    `<` that does not close an element: elements, comments, declarations) would pass the
    bound, a count at the speed of a byte search rather than of Python per element."""
    from lxml import etree  # with the first Office file: an idle bot does not carry it

    if whole and budget.elements + xml.count(b"<") - xml.count(b"</") > MAX_XML_ELEMENTS:
        raise UnreadableFile("too_complex")
    depth = 0
    events = etree.iterparse(io.BytesIO(xml), events=("start", "end"), resolve_entities=False,
                             load_dtd=False, no_network=True, huge_tree=False)
    try:
        for event, element in events:
            if event == "start":
                depth += 1
                budget.count(element, depth)
                yield event, element
                continue
            depth -= 1
            yield event, element
            element.clear(keep_tail=False)
            parent = element.getparent()
            while parent is not None and element.getprevious() is not None:
                del parent[0]
    except etree.XMLSyntaxError as exc:  # libxml2's own limits (depth 256, a 10 MB text) are ours too
        limit = exc.code == etree.ErrorTypes.ERR_RESOURCE_LIMIT
        raise UnreadableFile("too_complex" if limit else "unreadable") from exc


def member(archive: zipfile.ZipFile, name: str) -> bytes | None:
    """The part's bytes, None when the package has no such part."""
    try:
        return archive.read(name)
    except KeyError:
        return None


def relationships(archive: zipfile.ZipFile, part: str, budget: XmlBudget) -> list[tuple[str, str]]:
    """(relationship type's last word, target part) for each internal relationship of `part`
    ("" for the package itself), in the order they stand; those before any broken markup
    (a reader falls back to the usual part names, as Office does)."""
    folder, name = posixpath.split(part)
    rels = member(archive, posixpath.join(folder, "_rels", f"{name}.rels") if part else PACKAGE_RELATIONSHIPS)
    found: list[tuple[str, str]] = []
    try:
        for event, element in stream(rels or b"<Relationships/>", budget):
            if event != "end" or not str(element.tag).endswith("}Relationship"):
                continue
            target = element.get("Target") or ""
            if element.get("TargetMode") == "External" or not target:
                continue
            path = (target.lstrip("/") if target.startswith("/")
                    else posixpath.normpath(posixpath.join(folder, target)))
            found.append(((element.get("Type") or "").rsplit("/", 1)[-1], path))
    except UnreadableFile as broken:
        if broken.reason != "unreadable":
            raise
    return found


def is_strict(archive: zipfile.ZipFile) -> bool:
    """Whether the package's relationships are written in Strict Open XML's namespaces."""
    return STRICT_MARK in (member(archive, PACKAGE_RELATIONSHIPS) or b"")


def transitional(data: bytes) -> bytes:
    """The package with every XML part's Strict namespaces replaced by their Transitional
    twins (the markup is otherwise the same); other members copied as they are."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename.endswith((".xml", ".rels")):
                for strict, usual in STRICT_NAMESPACES:
                    body = body.replace(strict, usual)
            target.writestr(info.filename, body)
    return out.getvalue()
