"""The tiny files the image and PDF checks send: made here, so a check needs no asset.

The image is one colour and the PDF one word, so the model's answer can be judged by a
plain word match. Both are a few hundred bytes: a check costs the provider next to
nothing to read them.
"""

from __future__ import annotations

import io
from functools import cache

from PIL import Image

IMAGE_COLOUR = "red"
_RGB = (220, 20, 30)
IMAGE_SIDE = 64  # pixels: big enough for every vision model to see a colour, still ~100 bytes
DOCUMENT_WORD = "LIGHTHOUSE"


@cache
def solid_png() -> bytes:
    """A square PNG of one colour (`IMAGE_COLOUR`)."""
    out = io.BytesIO()
    Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE), _RGB).save(out, "PNG")
    return out.getvalue()


def _pdf_objects(word: str) -> list[bytes]:
    """One page showing `word` in Helvetica (a standard font: nothing embedded)."""
    content = f"BT /F1 28 Tf 36 60 Td ({word}) Tj ET".encode("ascii")
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 320 144] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]


@cache
def word_pdf(word: str = DOCUMENT_WORD) -> bytes:
    """A one-page PDF whose only text is `word` (ASCII letters), with its cross-reference
    table, so every reader opens it without repairing it."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(_pdf_objects(word), start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, table)
    return bytes(out)
