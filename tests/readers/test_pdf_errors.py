"""Whatever a malformed PDF makes pypdf raise is a note naming why, never a failed question."""

from __future__ import annotations

import zlib

import pytest

from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.pdf_files import read_pdf
from tests.capabilities.reading.attachments.document_fixtures import pdf_bytes

CONTENT = b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET"


def fuzzed_pdf() -> bytes:
    """A page whose content stream names its filter `/Fl`, the abbreviation of /FlateDecode
    only inline images may use: pypdf 7 raises its DeprecationError (not a PyPdfError)
    while extracting the page's text."""
    packed = zlib.compress(CONTENT)
    stream = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(CONTENT), CONTENT)
    return pdf_bytes(["Hello"]).replace(stream, b"<< /Length %d /Filter /Fl >>\nstream\n%s\nendstream"
                                        % (len(packed), packed))


def test_a_filter_name_pypdf_dropped_is_a_note_not_its_deprecation_error() -> None:
    with pytest.raises(UnreadableFile) as refused:
        read_pdf(fuzzed_pdf(), "fuzzed.pdf")
    assert refused.value.reason == "unreadable"
    assert type(refused.value.__cause__).__name__ == "DeprecationError"
