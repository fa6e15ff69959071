"""Office packages written by hand in the tests: a Word file with text in every place Word
keeps it, the same in Strict Open XML, and hostile parts (attribute bombs, deep nesting,
millions of tiny elements, a shared string shown in every cell)."""

from __future__ import annotations

import io
import zipfile

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
STRICT_W = "http://purl.oclc.org/ooxml/wordprocessingml/main"
STRICT_R = "http://purl.oclc.org/ooxml/officeDocument/relationships"
NS = (f'xmlns:w="{W}" xmlns:r="{R}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
      'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:v="urn:schemas-microsoft-com:vml"')
CONTENT_TYPES = ('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                 '<Default Extension="xml" ContentType="application/xml"/>'
                 '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                 '</Types>')


def _relationships(relations: list[tuple[str, str]], base: str = R) -> str:
    items = "".join(f'<Relationship Id="rId{n}" Type="{base}/{kind}" Target="{target}"/>'
                    for n, (kind, target) in enumerate(relations, start=1))
    return f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{items}</Relationships>'


def _run(text: str) -> str:
    return f"<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r>"


BODY = (
    f"<w:p><w:pPr><w:tabs><w:tab w:val=\"left\" w:pos=\"720\"/></w:tabs></w:pPr>{_run('Body paragraph.')}"
    f"<w:r><w:footnoteReference w:id=\"1\"/></w:r></w:p>"
    # a content control at block level (python-docx's body walk does not enter it)
    f"<w:sdt><w:sdtPr><w:alias w:val=\"Client\"/></w:sdtPr><w:sdtContent><w:p>{_run('Inside a content control.')}"
    "</w:p></w:sdtContent></w:sdt>"
    # tracked changes: the insertion read, the deletion left out
    f"<w:p>{_run('Kept ')}<w:ins w:id=\"2\" w:author=\"A\">{_run('inserted words')}</w:ins>"
    "<w:del w:id=\"3\" w:author=\"A\"><w:r><w:delText>deleted words</w:delText></w:r></w:del></w:p>"
    # a simple field and a complex one: their shown results, not their instructions
    f"<w:p><w:fldSimple w:instr=\" AUTHOR \">{_run('Simple Field Result')}</w:fldSimple></w:p>"
    "<w:p><w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText> DATE \\@ yyyy </w:instrText></w:r>"
    f"<w:r><w:fldChar w:fldCharType=\"separate\"/></w:r>{_run('Complex Field Result')}"
    "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r></w:p>"
    # a text box: DrawingML and its VML fallback hold the same paragraph
    "<w:p><w:r><mc:AlternateContent><mc:Choice Requires=\"wps\"><w:drawing><wps:txbx><w:txbxContent>"
    f"<w:p>{_run('Text box words.')}</w:p></w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback>"
    f"<w:pict><v:textbox><w:txbxContent><w:p>{_run('Text box words.')}</w:p></w:txbxContent></v:textbox></w:pict>"
    "</mc:Fallback></mc:AlternateContent></w:r></w:p>"
    f"<w:tbl><w:tr><w:tc><w:p>{_run('cell one')}</w:p></w:tc><w:tc><w:p>{_run('cell two')}</w:p></w:tc></w:tr></w:tbl>"
)
NOTES = ("<w:footnotes {ns}><w:footnote w:type=\"separator\" w:id=\"-1\"><w:p><w:r><w:separator/></w:r></w:p>"
         f"</w:footnote><w:footnote w:id=\"1\"><w:p>{_run('The footnote text.')}</w:p></w:footnote></w:footnotes>")
ENDNOTES = f"<w:endnotes {{ns}}><w:endnote w:id=\"1\"><w:p>{_run('The endnote text.')}</w:p></w:endnote></w:endnotes>"
HEADER = f"<w:hdr {{ns}}><w:p>{_run('Running header')}</w:p></w:hdr>"
FOOTER = f"<w:ftr {{ns}}><w:p>{_run('Running footer')}</w:p></w:ftr>"


def _zip(members: dict[str, str | bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return out.getvalue()


def word_package(body: str = BODY, *, strict: bool = False, parts: bool = True) -> bytes:
    """A .docx whose text stands in the body, a content control, tracked changes, fields,
    a text box, a table, a footnote, an endnote, a header and two footers (the same one
    twice); `strict`: in Strict Open XML's namespaces."""
    relations = [("footnotes", "footnotes.xml"), ("endnotes", "endnotes.xml"), ("header", "header1.xml"),
                 ("footer", "footer1.xml"), ("footer", "footer2.xml")] if parts else []
    members: dict[str, str | bytes] = {
        "[Content_Types].xml": CONTENT_TYPES,
        "_rels/.rels": _relationships([("officeDocument", "word/document.xml")]),
        "word/_rels/document.xml.rels": _relationships(relations),
        "word/document.xml": f'<?xml version="1.0"?><w:document {NS}><w:body>{body}</w:body></w:document>',
    }
    if parts:
        members |= {"word/footnotes.xml": NOTES.format(ns=NS), "word/endnotes.xml": ENDNOTES.format(ns=NS),
                    "word/header1.xml": HEADER.format(ns=NS), "word/footer1.xml": FOOTER.format(ns=NS),
                    "word/footer2.xml": FOOTER.format(ns=NS)}
    if strict:
        members = {name: str(text).replace(W, STRICT_W).replace(R, STRICT_R) for name, text in members.items()}
    return _zip(members)


def to_strict(data: bytes) -> bytes:
    """A Transitional package (as openpyxl writes one) in Strict Open XML's namespaces."""
    pairs = ((b"http://schemas.openxmlformats.org/officeDocument/2006/relationships", STRICT_R.encode()),
             (b"http://schemas.openxmlformats.org/spreadsheetml/2006/main", b"http://purl.oclc.org/ooxml/spreadsheetml/main"))
    members: dict[str, str | bytes] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        for name in source.namelist():
            body = source.read(name)
            for usual, strict in pairs:
                body = body.replace(usual, strict)
            members[name] = body
    return _zip(members)


def replaced_member(data: bytes, name: str, body: bytes) -> bytes:
    """The package with one member's bytes replaced (added when it has none)."""
    members: dict[str, str | bytes] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        for member in source.namelist():
            members[member] = source.read(member)
    members[name] = body
    return _zip(members)
