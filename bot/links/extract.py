"""A page's readable text: HTML reduced to its main text and title, plain text as it is.

Main-text extraction is trafilatura's (boilerplate — navigation, footers, cookie banners —
left out; it leads the published comparisons of such extractors and is kept up). Parsing
and scoring up to 2 MB of HTML is CPU work of up to a second, and a hostile page's of
minutes, so `_main_text` runs in a process of the reader pool (`bot.readers`), never in
the bot's: past its deadline the process is killed, and it holds no GIL the loop needs.

The extraction libraries log what they meet (parse errors quote the markup); their
loggers are quieted so no page text reaches the bot's log.
"""

from __future__ import annotations

import logging

from bot.links.charset import text_codec
from bot.readers.pool import ReadFailed, Reading, reader_pool

PAGE_READER = "bot.links.extract:_main_text"  # by import path: the reader process imports it
for _name in ("trafilatura", "htmldate", "justext", "courlan", "readability"):
    logging.getLogger(_name).setLevel(logging.CRITICAL + 1)


class ExtractionFailed(Exception):
    """The page's markup could not be read to text."""


def decoded(body: bytes, charset: str | None) -> str:
    """`body` as text in `charset` (UTF-8 when none, or one that does not decode bytes to
    text: `charset.choose_charset` picks a better one first); a byte that does not decode
    becomes U+FFFD rather than failing the page."""
    return body.decode(text_codec(charset) or "utf-8", errors="replace")


def _title(tree: object) -> str | None:
    for path in ("string(//head/title)", "string(//meta[@property='og:title']/@content)",
                 "string(//title)"):
        found = " ".join(str(tree.xpath(path)).split())  # type: ignore[attr-defined]
        if found:
            return found
    return None


def _main_text(markup: bytes | str) -> tuple[str | None, str]:
    """(title, main text) of an HTML page; the whole visible text when no main part stands
    out (a short page), "" when there is none (a page built by script)."""
    import trafilatura  # with the first page, in a reader process: ~25 MiB the bot never holds

    tree = trafilatura.load_html(markup)
    if tree is None:
        return None, ""
    title = _title(tree)
    document = trafilatura.bare_extraction(tree, with_metadata=False, include_comments=False,
                                           include_images=False, include_links=False)
    text = getattr(document, "text", None) or ""
    if not text.strip():
        text = trafilatura.html2txt(tree) or ""
    return title, text.strip()


async def html_main_text(body: bytes, charset: str | None, timeout: float) -> tuple[str | None, str]:
    """(title, main text) of an HTML body, worked out in a reader process.

    TimeoutError past `timeout` (or when no reader was free in time); ExtractionFailed
    when the markup cannot be parsed, or the reader ran out of memory or failed."""
    markup: bytes | str = decoded(body, charset) if charset else body  # bytes: its <meta> decides
    try:
        reading = Reading(PAGE_READER, (markup,), takes_deadline=False, seconds=timeout)
        return await reader_pool().read(reading)  # type: ignore[no-any-return]
    except ReadFailed as failed:  # a page must not fail the question, whatever the parser meets
        if failed.reason in ("timeout", "busy"):
            raise TimeoutError(failed.reason) from None
        raise ExtractionFailed(failed.detail or failed.reason) from None


def clipped(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to `limit` characters at a line or word end when one is near; and whether
    it was cut."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    for stop in ("\n", " "):
        at = head.rfind(stop)
        if at >= limit * 0.9:
            return head[:at].rstrip(), True
    return head, True
