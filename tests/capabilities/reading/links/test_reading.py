"""Pages read to what the model gets, from real local servers: HTML to its main text and
title, plain text as it is, a PDF as its bytes; each link once, and nothing of a page in
the log."""

from __future__ import annotations

import logging
import os
import time

import pytest

from bot.capabilities.reading.links import LinkDocument, LinkFailure, LinkPage, read_links
from bot.capabilities.reading.links import extract as extract_module
from bot.capabilities.reading.links.fetch import USER_AGENT
from bot.readers.pool import reader_pool
from tests.capabilities.reading.links.servers import ARTICLE_HTML, TINY_PDF, PageServer, policy_with


@pytest.fixture
async def public():
    async with PageServer() as server:
        yield server


async def test_html_read_to_its_main_text_and_title(public):
    public.page("/kettles", ARTICLE_HTML)
    reading = await read_links(f"can you sum up {public.url('/kettles')} for me?", policy_with())
    (page,) = reading.results
    assert isinstance(page, LinkPage)
    assert page.title == "How kettles boil | The Kettle Report"
    assert "bimetallic strip" in page.text and "descaling every month" in page.text
    for boilerplate in ("Shop our kettles", "Sign in", "Copyright", "Cookie settings",
                        "Privacy policy", "Subscribe to the newsletter"):
        assert boilerplate not in page.text
    assert not page.cut


async def test_html_decoded_with_its_declared_charset(public):
    html = ("<html><head><title>Café</title></head><body><article><p>"
            + "Crème brûlée à la carte, servie chaude au café du coin. " * 10
            + "</p></article></body></html>")
    public.page("/menu", html.encode("iso-8859-1"), "text/html; charset=iso-8859-1")
    (page,) = (await read_links(public.url("/menu"), policy_with())).results
    assert isinstance(page, LinkPage)
    assert page.title == "Café" and "Crème brûlée" in page.text


async def test_a_page_with_no_text_is_no_text(public):
    public.page("/app", "<html><head><title>App</title><script>render()</script></head>"
                        "<body><div id='root'></div></body></html>")
    (result,) = (await read_links(public.url("/app"), policy_with())).results
    assert isinstance(result, LinkFailure) and result.reason == "no_text"


async def test_plain_text_as_it_is(public):
    public.page("/notes.txt", "line one\nline two\n\tindented", "text/plain; charset=utf-8")
    (page,) = (await read_links(public.url("/notes.txt"), policy_with())).results
    assert isinstance(page, LinkPage)
    assert page.text == "line one\nline two\n\tindented" and page.title is None


async def test_plain_text_charset_and_bad_bytes(public):
    public.page("/latin.txt", "naïve façade".encode("latin-1"), "text/plain; charset=latin-1")
    public.page("/broken.txt", b"ok \xff\xfe still ok", "text/plain")
    public.page("/odd.txt", b"plain", "text/plain; charset=no-such-charset")
    reading = await read_links(" ".join(public.url(p) for p in ("/latin.txt", "/broken.txt", "/odd.txt")),
                               policy_with())
    latin, broken, odd = reading.results
    assert latin.text == "naïve façade"
    assert broken.text == "ok \ufffd\ufffd still ok"
    assert odd.text == "plain"


async def test_long_text_cut_to_the_bound(public):
    public.page("/long.txt", "word " * 10_000, "text/plain")
    (page,) = (await read_links(public.url("/long.txt"), policy_with(max_chars=1_000))).results
    assert page.cut and len(page.text) <= 1_000 and page.text.endswith("word")


async def test_pdf_returned_as_bytes(public):
    public.page("/files/Annual Report.pdf", TINY_PDF, "application/pdf")
    (doc,) = (await read_links(public.url("/files/Annual%20Report.pdf"), policy_with())).results
    assert isinstance(doc, LinkDocument)
    assert (doc.media_type, doc.data, doc.filename) == ("application/pdf", TINY_PDF, "Annual Report.pdf")


async def test_pdf_without_a_name_in_its_url(public):
    public.page("/download", TINY_PDF, "application/pdf")
    (doc,) = (await read_links(public.url("/download?id=7"), policy_with())).results
    assert isinstance(doc, LinkDocument) and doc.filename == "download.pdf"


async def test_each_link_fetched_once_at_most_three_and_the_rest_named(public):
    for name in "abcde":
        public.page(f"/{name}", f"page {name}", "text/plain")
    text = " ".join(public.url(f"/{n}") for n in "aabcde") + f" <{public.url('/a')}#top>"
    reading = await read_links(text, policy_with())
    assert [r.text for r in reading.results] == ["page a", "page b", "page c"]
    assert reading.left_out == (public.url("/d"), public.url("/e"))
    assert sorted(public.paths) == ["/a", "/b", "/c"]


async def test_no_links_no_requests():
    reading = await read_links("just a question, <@123> <#456>", policy_with())
    assert reading.results == () and reading.left_out == ()


async def test_a_descriptive_user_agent_and_no_proxy_from_the_environment(public, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # would swallow the request if trusted
    public.page("/ua", "hi", "text/plain")
    (page,) = (await read_links(public.url("/ua"), policy_with())).results
    assert isinstance(page, LinkPage)
    headers = public.seen[0].headers
    assert headers["User-Agent"] == USER_AGENT and "llm-discord-bot" in USER_AGENT


async def test_html_extracted_in_a_reader_process(public, monkeypatch):
    monkeypatch.setattr(extract_module, "PAGE_READER", "tests.support.reader_doubles:page_pid")
    public.page("/kettles", ARTICLE_HTML)
    (page,) = (await read_links(public.url("/kettles"), policy_with())).results
    assert isinstance(page, LinkPage)
    assert page.title != str(os.getpid()) and int(page.title) in reader_pool().pids()


async def test_page_text_never_reaches_the_log(public, caplog):
    caplog.set_level(logging.DEBUG)
    public.page("/ok", "<html><body><article><p>" + "SECRET-PAGE-WORDS " * 50
                + "</p></article></body></html>")
    forged = public.url("/forged%0AERROR%20fake%20line")
    await read_links(f"{public.url('/ok')} {forged} http://10.0.0.1/\u202eevil", policy_with())
    assert "SECRET-PAGE-WORDS" not in caplog.text
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("bot.capabilities.reading.links")]
    assert len(lines) == 2 and all("\n" not in line and "\u202e" not in line for line in lines)
    assert any("private_address" in line for line in lines)


async def test_extraction_that_takes_too_long_is_a_timeout(public, monkeypatch):
    monkeypatch.setattr(extract_module, "PAGE_READER", "tests.support.reader_doubles:slow_page")
    public.page("/slow-html", ARTICLE_HTML)
    await reader_pool().start()
    started = time.monotonic()
    (result,) = (await read_links(public.url("/slow-html"), policy_with(extract_timeout=0.2))).results
    assert isinstance(result, LinkFailure) and result.reason == "timeout"
    assert time.monotonic() - started < 0.55
