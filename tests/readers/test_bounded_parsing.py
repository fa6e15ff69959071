"""Small hostile files refused, or read in part, quickly and with bounded memory: each one
is read in a fresh process, which reports its seconds and how far its peak RSS grew
while reading (the libraries already imported)."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.capabilities.reading.attachments.document_fixtures import docx_bytes, xlsx_bytes
from tests.readers.packages import NS, replaced_member

MAX_GROWTH_MIB = 80
MAX_SECONDS = 3.0
READ_IN_A_CHILD = """
import json, sys, time
sys.path.insert(0, ROOT)
import lxml.etree, docx, openpyxl, trafilatura
from bot.capabilities.reading.attachment_files import UnreadableFile
from bot.capabilities.reading.office_files import docx_text, xlsx_text
from bot.capabilities.reading.links.extract import _main_text
data = open(sys.argv[1], "rb").read()
read = {"docx": lambda: docx_text(data, "f.docx"), "xlsx": lambda: xlsx_text(data, "f.xlsx"),
        "html": lambda: _main_text(data)}[sys.argv[2]]
def status(field):
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak (VmHWM) starts again from here: the imports' own peak is not the reader's
before = status("VmRSS")
started = time.monotonic()
try:
    result = read()
    outcome = "read:" + (result[1][:200] if isinstance(result, tuple) else result.sections[0].text[:200])
except UnreadableFile as exc:
    outcome = "refused:" + exc.reason
except Exception as exc:
    outcome = "raised:" + type(exc).__name__
peak = status("VmHWM")
print(json.dumps({"outcome": outcome, "seconds": time.monotonic() - started,
                  "growth_mib": max(0, peak - before) / 1024}))
"""


def read_in_a_child(tmp_path: Path, data: bytes | str, kind: str) -> dict[str, object]:
    path = tmp_path / f"hostile.{kind}"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    script = READ_IN_A_CHILD.replace("ROOT", repr(str(Path(__file__).resolve().parents[2])))
    out = subprocess.run([sys.executable, "-c", script, str(path), kind], capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout)


def _document(body: str) -> bytes:
    """A .docx as python-docx writes one, its body replaced by `body`."""
    return replaced_member(docx_bytes(["x"]), "word/document.xml",
                           f'<w:document {NS}><w:body>{body}</w:body></w:document>'.encode())


def _bounded(result: dict[str, object], outcome: str) -> None:
    assert str(result["outcome"]).startswith(outcome), result
    assert float(result["seconds"]) < MAX_SECONDS, result  # type: ignore[arg-type]
    assert float(result["growth_mib"]) < MAX_GROWTH_MIB, result  # type: ignore[arg-type]


HOSTILE_WORD = {
    # 1.5 million empty runs: 11 MB of XML, 30 KB zipped (python-docx held it as ~700 MB of tree)
    "tiny_elements": "<w:p>" + "<w:r/>" * 1_500_000 + "</w:p>",
    "attribute_bomb": "<w:p " + " ".join(f'w:a{i}="1"' for i in range(100_000)) + "><w:r><w:t>x</w:t></w:r></w:p>",
    "deep_nesting": "<w:sdt><w:sdtContent>" * 2_000 + "<w:p/>" + "</w:sdtContent></w:sdt>" * 2_000,
}


@pytest.mark.parametrize("name", HOSTILE_WORD)
def test_a_hostile_word_file_is_refused_quickly_with_bounded_memory(tmp_path: Path, name: str) -> None:
    data = _document(HOSTILE_WORD[name])
    assert len(data) < 2_000_000
    _bounded(read_in_a_child(tmp_path, data, "docx"), "refused:too_complex")


SHARED_STRINGS_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"


def _with_shared_strings(workbook: bytes, body: str) -> bytes:
    """The workbook with a shared strings part of `body`'s entries, which openpyxl finds
    through [Content_Types].xml."""
    with zipfile.ZipFile(io.BytesIO(workbook)) as archive:
        types = archive.read("[Content_Types].xml").decode()
    types = types.replace("</Types>", f'<Override PartName="/xl/sharedStrings.xml" ContentType="{SHARED_STRINGS_TYPE}"/>'
                                      "</Types>")
    sst = f'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{body}</sst>'
    return replaced_member(replaced_member(workbook, "[Content_Types].xml", types.encode()), "xl/sharedStrings.xml",
                           sst.encode())


def test_one_long_shared_string_shown_in_every_cell_is_read_once_in_part(tmp_path: Path) -> None:
    # 600 cells showing one 1 MB string: main's reader built 600 MB of CSV first
    workbook = xlsx_bytes({"S": [["placeholder"] * 3 for _ in range(200)]})
    data = _with_shared_cells(_with_shared_strings(workbook, f"<si><t>{'ab' * 500_000}</t></si>"))
    result = read_in_a_child(tmp_path, data, "xlsx")
    _bounded(result, "read:abab")


def _with_shared_cells(data: bytes) -> bytes:
    """The workbook's sheet with every cell showing shared string 0."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        sheet = archive.read("xl/worksheets/sheet1.xml").decode()
    sheet = re.sub(r'<c r="([A-Z]+\d+)"[^>]*>.*?</c>', r'<c r="\1" t="s"><v>0</v></c>', sheet)
    return replaced_member(data, "xl/worksheets/sheet1.xml", sheet.encode())


def test_a_shared_strings_bomb_of_tiny_entries_is_refused(tmp_path: Path) -> None:
    data = _with_shared_strings(xlsx_bytes({"S": [["a"]]}), "<si><t/></si>" * 1_000_000)
    _bounded(read_in_a_child(tmp_path, data, "xlsx"), "refused:too_complex")


def test_a_row_of_a_million_cells_is_refused(tmp_path: Path) -> None:
    workbook = xlsx_bytes({"S": [["a"]]})
    row = "<row r=\"1\">" + "<c><v>1</v></c>" * 700_000 + "</row>"
    sheet = (f'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{row}'
             "</sheetData></worksheet>")
    _bounded(read_in_a_child(tmp_path, replaced_member(workbook, "xl/worksheets/sheet1.xml", sheet.encode()), "xlsx"),
             "refused:too_complex")


HOSTILE_PAGES = {
    "attribute_bomb": "<html><body><p " + " ".join(f"a{i}=x" for i in range(130_000)) + ">hi</p></body></html>",
    "spread_attributes": "<html><body>" + '<span a="1" b="2" c="3" d="4">w </span>' * 40_000 + "</body></html>",
    "tiny_elements": "<html><body>" + "<b>x</b>" * 250_000 + "</body></html>",
    "deep_nesting": "<html><body>" + "<div>" * 240 + "deep" + "</div>" * 240 + "</body></html>",
}


@pytest.mark.parametrize("name", HOSTILE_PAGES)
def test_a_hostile_page_is_refused_before_trafilatura(tmp_path: Path, name: str) -> None:
    _bounded(read_in_a_child(tmp_path, HOSTILE_PAGES[name], "html"), "raised:MarkupTooComplex")


def test_a_page_with_a_long_script_that_looks_like_tags_is_read(tmp_path: Path) -> None:
    script = "<script>" + "if(a<b&&c<d){x=1}" * 80_000 + "</script>"
    page = f"<html><head>{script}</head><body><article><p>{'Readable words. ' * 40}</p></article></body></html>"
    _bounded(read_in_a_child(tmp_path, page, "html"), "read:Readable words.")
