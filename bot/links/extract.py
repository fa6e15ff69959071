"""A page's readable text: HTML reduced to its main text and title, plain text as it is.

Main-text extraction is trafilatura's (boilerplate — navigation, footers, cookie banners —
left out; it leads the published comparisons of such extractors and is kept up). Parsing
and scoring up to 2 MB of HTML is CPU work of up to a second, so it runs in
`EXTRACT_THREADS` worker threads of its own, never on the event loop nor in the loop's
shared pool, and the wait for it is bounded (a thread cannot be stopped, but its result
is then dropped and only `EXTRACT_THREADS` can be busy at once).

The extraction libraries log what they meet (parse errors quote the markup); their
loggers are quieted so no page text reaches the bot's log.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging

from bot.links.charset import text_codec

EXTRACT_THREADS = 2
_executor = concurrent.futures.ThreadPoolExecutor(max_workers=EXTRACT_THREADS,
                                                  thread_name_prefix="link-extract")
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
    import trafilatura  # with the first page, in an extraction thread: ~25 MiB an idle bot skips

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
    """(title, main text) of an HTML body, worked out in a worker thread.

    TimeoutError past `timeout`; ExtractionFailed when the markup cannot be parsed."""
    markup: bytes | str = decoded(body, charset) if charset else body  # bytes: its <meta> decides
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.wait_for(loop.run_in_executor(_executor, _main_text, markup), timeout)
    except TimeoutError:
        raise
    except Exception as exc:  # a page must not fail the question, whatever the parser meets
        raise ExtractionFailed(type(exc).__name__) from None


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
