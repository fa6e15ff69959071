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
import re
from collections.abc import Iterator
from typing import Any

from bot.capabilities.reading.links.charset import text_codec
from bot.readers.pool import ReadFailed, Reading, reader_pool

PAGE_READER = "bot.capabilities.reading.links.extract:_main_text"  # by import path: the reader process imports it

# Bounds on a page's markup, well above real pages (trafilatura's 1,000 evaluation pages,
# up to 1.6 MB, stay under a third of each; bench/reading_corpus.py html) and below what
# costs trafilatura a second.
MAX_PAGE_ELEMENTS = 60_000
MAX_PAGE_ATTRIBUTES = 150_000
MAX_TAG_ATTRIBUTES = 1_000  # libxml2 checks a tag's attributes pairwise: 130,000 took it 26 s
MAX_PAGE_DEPTH = 200
LONG_TAG = 256  # characters past which a tag's attributes are counted one by one
_TAG_TEXT = re.compile(r"<[A-Za-z][^>]*")
_TAG_BYTES = re.compile(rb"<[A-Za-z][^>]*")
_RAW_TEXT = re.compile(r"<(script|style)(?:[\s/]|$)")
_RAW_BYTES = re.compile(rb"<(script|style)(?:[\s/]|$)")
_QUOTED_TEXT = re.compile(r"\"[^\"]*\"|'[^']*'")
_QUOTED_BYTES = re.compile(rb"\"[^\"]*\"|'[^']*'")
for _name in ("trafilatura", "htmldate", "justext", "courlan", "readability"):
    logging.getLogger(_name).setLevel(logging.CRITICAL + 1)


class ExtractionFailed(Exception):
    """The page's markup could not be read to text."""


class MarkupTooComplex(Exception):
    """A page past the bounds on its elements, attributes or depth, refused unparsed."""


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


def _tags(markup: bytes | str) -> Iterator[Any]:
    """The start tags of `markup` (up to their `>`, lowercased), script and style text
    skipped as an HTML parser skips it: to its closing tag, or to the end without one."""
    lowered: Any = markup.lower()
    text = isinstance(lowered, str)
    tag_pattern, raw_pattern = (_TAG_TEXT, _RAW_TEXT) if text else (_TAG_BYTES, _RAW_BYTES)
    position = 0
    while match := tag_pattern.search(lowered, position):
        tag = match.group()
        yield tag
        position = match.end()
        if raw := raw_pattern.match(tag):
            closing = lowered.find(("</" if text else b"</") + raw.group(1), position)
            position = len(lowered) if closing < 0 else closing


def _attributes(tag: Any) -> int:
    """How many attributes a start tag holds (its name and quoted values left out)."""
    text = isinstance(tag, str)
    if len(tag) < LONG_TAG:
        return int(tag.count("=" if text else b"="))  # a short tag: one `=` an attribute
    return len((_QUOTED_TEXT if text else _QUOTED_BYTES).sub(" " if text else b" ", tag).split()) - 1


def check_markup(markup: bytes | str) -> None:
    """Refuse, before any parser sees it, markup of more than `MAX_PAGE_ELEMENTS` start tags,
    `MAX_PAGE_ATTRIBUTES` attributes, or `MAX_TAG_ATTRIBUTES` on one tag: libxml2's HTML
    parser spends 26 s on one tag of 130,000 attributes, and trafilatura's passes over a
    2 MB page of tiny elements take seconds and hundreds of megabytes. A regular
    expression finds the tags (script text that looks like a tag counts too: a bound, not
    a parse)."""
    elements = attributes = 0
    for tag in _tags(markup):
        elements += 1
        count = _attributes(tag)
        attributes += count
        if elements > MAX_PAGE_ELEMENTS or attributes > MAX_PAGE_ATTRIBUTES or count > MAX_TAG_ATTRIBUTES:
            raise MarkupTooComplex("too many elements or attributes")


def _main_text(markup: bytes | str) -> tuple[str | None, str]:
    """(title, main text) of an HTML page; the whole visible text when no main part stands
    out (a short page), "" when there is none (a page built by script). `MarkupTooComplex`
    for a page past the bounds (`check_markup`, and `MAX_PAGE_DEPTH` once parsed)."""
    check_markup(markup)
    import trafilatura  # with the first page, in a reader process: ~25 MiB the bot never holds

    tree = trafilatura.load_html(markup)
    if tree is None:
        return None, ""
    if tree.xpath(f"boolean(//*[ancestor::*[{MAX_PAGE_DEPTH}]])"):
        raise MarkupTooComplex("nested too deep")
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
