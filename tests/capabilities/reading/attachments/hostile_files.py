"""Small files that make a reader work for minutes or grow to hundreds of megabytes, built
here (nothing hostile is stored in the repository): the shapes an adversarial review of
the bot's readers found."""

from __future__ import annotations

import io
import zipfile
import zlib

from tests.capabilities.reading.attachments.document_fixtures import pdf_of, xlsx_bytes


def form_bomb_pdf(invocations: int = 1_000_000) -> bytes:
    """One page whose content stream invokes one form XObject `invocations` times: a few
    kilobytes compressed, hours of text extraction in pypdf."""
    content = zlib.compress(b"/X0 Do\n" * invocations, 9)
    form = b"BT /F1 12 Tf 72 720 Td (form text) Tj ET"
    return pdf_of({
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
            b"<< /Font << /F1 3 0 R >> /XObject << /X0 6 0 R >> >> /Contents 5 0 R >>"),
        5: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(content), content),
        6: (b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Length %d >>\nstream\n%s\nendstream" % (len(form), form)),
    })


CONTENT_TYPES = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
                 b'package/2006/content-types"><Default Extension="rels" ContentType="application/'
                 b'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
                 b'ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="'
                 b'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        b'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
        b'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def heavy_docx(paragraphs: int = 60_000) -> bytes:
    """A Word file of many short paragraphs, written as its XML (python-docx takes minutes
    to build it): tens of kilobytes, seconds of parsing."""
    body = "".join(f"<w:p><w:r><w:t>paragraph {i}</w:t></w:r></w:p>" for i in range(paragraphs))
    document = f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", RELS)
        archive.writestr("word/document.xml", document)
    return out.getvalue()


def heavy_xlsx(rows: int = 5_000) -> bytes:
    """A workbook of many rows of numbers."""
    return xlsx_bytes({"Sheet": [[i, i * 2, i * 3, f"row {i}"] for i in range(rows)]})


def attribute_page(attributes: int = 130_000) -> bytes:
    """A page whose one element carries `attributes` attributes."""
    attrs = " ".join(f'data-a{i}="{i}"' for i in range(attributes))
    return (f"<html><head><title>t</title></head><body><div {attrs}><p>text</p></div>"
            f"<article><p>{'words ' * 200}</p></article></body></html>").encode()
