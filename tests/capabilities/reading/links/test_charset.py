"""A page served with a charset that is not a text encoding, from real local servers.

`codecs.lookup("hex")` finds a codec, but a bytes-to-bytes one: decoding with it raises,
which used to fail the whole question with no word to the member. Such a page is read in
its `<meta charset>`, else in what charset-normalizer detects, else UTF-8, and the page's
result says which charset was replaced by which (the member's note).
"""

from __future__ import annotations

import re

import pytest

from bot.capabilities.reading.linked import linked_content
from bot.capabilities.reading.links import LinkPage, read_links
from bot.capabilities.reading.links.charset import text_codec
from providers.i18n import t
from tests.capabilities.reading.links.servers import PageServer, policy_with

BOGUS = ["hex", "base64", "zip", "rot13", "idna", "undefined", "punycode", "x-nonsense", '"<@everyone> **x**"']
FRENCH = "Crème brûlée à la carte, servie chaude au café du coin, avec une façade naïve. " * 8
JAPANESE = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。" * 20


@pytest.fixture
async def public():
    async with PageServer() as server:
        yield server


async def _page(server: PageServer, body: bytes, content_type: str) -> LinkPage:
    server.page("/p", body, content_type)
    (page,) = (await read_links(server.url("/p"), policy_with())).results
    assert isinstance(page, LinkPage), page
    return page


@pytest.mark.parametrize("declared", ["hex", "base64", "zip", "rot13", "idna", "undefined", "punycode"])
def test_only_codecs_that_decode_bytes_to_text_are_taken(declared):
    assert text_codec(declared) is None
    assert text_codec("Shift_JIS") == "shift_jis" and text_codec("latin-1") == "iso8859-1"


@pytest.mark.parametrize("declared", BOGUS)
async def test_a_plain_text_page_with_a_bogus_charset_is_read_and_says_so(public, declared):
    page = await _page(public, FRENCH.encode("utf-8"), f"text/plain; charset={declared}")
    assert page.text == FRENCH.strip()
    assert page.charset_replaced is not None
    shown, used = page.charset_replaced
    assert used == "utf-8" and re.fullmatch(r"[A-Za-z0-9._:+-]{1,40}", shown)  # no mention or markdown


@pytest.mark.parametrize("declared", ["hex", "x-nonsense"])
async def test_an_html_page_with_a_bogus_charset_is_read_in_its_meta_charset(public, declared):
    html = (f"<html><head><meta charset='iso-8859-1'><title>Café</title></head><body><article><p>{FRENCH}"
            "</p></article></body></html>")
    page = await _page(public, html.encode("iso-8859-1"), f"text/html; charset={declared}")
    assert page.title == "Café" and "Crème brûlée" in page.text
    assert page.charset_replaced == (declared, "iso8859-1")


async def test_without_a_meta_charset_the_detected_one_is_used(public):
    html = f"<html><head><title>猫</title></head><body><article><p>{JAPANESE}</p></article></body></html>"
    page = await _page(public, html.encode("shift_jis"), "text/html; charset=hex")
    assert "名前はまだ無い" in page.text
    declared, used = page.charset_replaced
    assert declared == "hex" and used in ("shift_jis", "cp932")


async def test_a_charset_the_page_means_is_no_note(public):
    page = await _page(public, FRENCH.encode("latin-1"), "text/plain; charset=latin-1")
    assert page.text == FRENCH.strip() and page.charset_replaced is None


@pytest.mark.parametrize("locale", ["en", "ja"])
async def test_the_member_is_told_which_charset_was_used(public, locale):
    public.page("/hex", FRENCH.encode("utf-8"), "text/plain; charset=hex")
    url = public.url("/hex")
    linked = await linked_content(url, policy_with(), locale)
    assert linked.notes == [t("chat.link.charset_replaced", locale, url=f"<{url}>", declared="hex", used="utf-8")]
    assert "hex" in linked.notes[0] and "utf-8" in linked.notes[0]
    assert any("Crème brûlée" in getattr(part, "text", "") for part in linked.parts)
