"""Documents built in the tests with the libraries the bot reads them with (python-docx,
openpyxl, pypdf), plus a hand-written PDF with a text layer and zip files made to lie."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

import docx
import openpyxl
from pypdf import PdfReader, PdfWriter

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def docx_bytes(paragraphs: Sequence[str], table: Sequence[Sequence[str]] = (), after: Sequence[str] = ()) -> bytes:
    """Paragraphs, then a table (rows of cells), then more paragraphs."""
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    for text in after:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    """A workbook of the named sheets, each given as rows of values."""
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def with_member(data: bytes, name: str, chunks: int, chunk: bytes = b" " * (1024 * 1024),
                head: bytes = b"", tail: bytes = b"") -> bytes:
    """The zip `data` with member `name` replaced by `head`, `chunks` × `chunk` and `tail`,
    streamed in (so a member of hundreds of megabytes costs the test no such memory)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as target:
        for info in source.infolist():
            if info.filename != name:
                target.writestr(info, source.read(info.filename))
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with target.open(info, "w", force_zip64=True) as member:
            member.write(head)
            for _ in range(chunks):
                member.write(chunk)
            member.write(tail)
    return out.getvalue()


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: Sequence[str | None]) -> bytes:
    """A PDF written by hand: one page per entry, its text in Helvetica (None: a page with
    nothing on it, as a scan without a text layer has no text)."""
    count = len(pages)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: ("<< /Type /Pages /Kids [" + " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
            + f"] /Count {count} >>").encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for i, text in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({_escaped(text)}) Tj ET".encode("latin-1") if text else b""
        objects[4 + 2 * i] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                              f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>").encode()
        objects[5 + 2 * i] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    return pdf_of(objects)


def pdf_of(objects: dict[int, bytes]) -> bytes:
    """A PDF file of numbered objects (1: the catalog), with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number in range(1, len(objects) + 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def encrypted(pdf: bytes, password: str = "secret") -> bytes:
    """`pdf` with a password, by pypdf's writer."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
