"""One question's links read: found, fetched at once (each once), turned into results.

A failure is a result, never an exception: the question goes on without that page and
its note names the link and the reason. The log gets one bounded line per link not
read (its URL through `loggable`), never what a page says.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import aiohttp

from bot.capabilities.reading.links.charset import choose_charset
from bot.capabilities.reading.links.extract import (
    ExtractionFailed,
    clipped,
    decoded,
    html_main_text,
)
from bot.capabilities.reading.links.fetch import Fetched, LinkRefused, fetch, open_session
from bot.capabilities.reading.links.finding import find_links
from bot.capabilities.reading.links.policy import LinkPolicy
from bot.capabilities.reading.links.results import (
    NO_TEXT,
    TIMEOUT,
    UNREACHABLE,
    WRONG_TYPE,
    LinkDocument,
    LinkFailure,
    LinkPage,
    LinkResult,
)
from providers.log_safe import loggable

log = logging.getLogger(__name__)

_PDF_MAGIC = b"%PDF-"
_FILENAME_UNSAFE = re.compile(r"[^\w.\- ]+")


@dataclass(frozen=True, slots=True)
class LinkReading:
    """The links of one question: `results` in the order the member wrote them (at most
    the policy's `max_links`), and `left_out`, the further links not read."""

    results: tuple[LinkResult, ...] = ()
    left_out: tuple[str, ...] = ()

    @property
    def failures(self) -> tuple[LinkFailure, ...]:
        return tuple(x for x in self.results if isinstance(x, LinkFailure))


def _filename(url: str) -> str:
    """A PDF's file name from its URL's last path segment (`document.pdf` when there is none)."""
    name = posixpath.basename(unquote(urlsplit(url).path))
    name = _FILENAME_UNSAFE.sub("_", name).strip(" ._")[:100]
    if not name:
        return "document.pdf"
    return name if name.lower().endswith(".pdf") else f"{name}.pdf"


async def _result(url: str, fetched: Fetched, policy: LinkPolicy) -> LinkResult:
    if fetched.media_type == "application/pdf":
        if _PDF_MAGIC not in fetched.body[:1024]:
            return LinkFailure(url, WRONG_TYPE, "served as a PDF but is not one")
        return LinkDocument(url, fetched.url, "application/pdf", fetched.body, _filename(fetched.url))
    charset = await choose_charset(fetched.body, fetched.charset, html=fetched.media_type == "text/html")
    if fetched.media_type == "text/plain":
        title, text = None, decoded(fetched.body, charset.codec).strip()
    else:
        try:
            title, text = await html_main_text(fetched.body, charset.codec, policy.extract_timeout)
        except TimeoutError:
            return LinkFailure(url, TIMEOUT, "its text was not extracted in time")
        except ExtractionFailed as failed:
            return LinkFailure(url, NO_TEXT, f"its markup could not be read ({failed})")
    if not text:
        return LinkFailure(url, NO_TEXT, "the page has no readable text")
    text, cut = clipped(text, policy.max_chars)
    replaced = (charset.not_understood, charset.codec) if charset.not_understood and charset.codec else None
    return LinkPage(url, fetched.url, title, text, cut, replaced)


async def read_link(session: aiohttp.ClientSession, url: str, policy: LinkPolicy) -> LinkResult:
    """One link read through `session` (from `fetch.open_session`), as a result."""
    try:
        fetched = await fetch(session, url, policy)
        outcome = await _result(url, fetched, policy)
    except LinkRefused as refused:
        outcome = LinkFailure(url, refused.reason, refused.detail)
    except (aiohttp.ClientError, OSError, ValueError) as exc:  # past the fetch's own mapping
        outcome = LinkFailure(url, UNREACHABLE, f"failed ({type(exc).__name__})")
    if isinstance(outcome, LinkFailure):
        log.info("link not read: %s (%s: %s)", loggable(url), outcome.reason, loggable(outcome.detail))
    return outcome


async def read_links(text: str, policy: LinkPolicy) -> LinkReading:
    """The links in a question's `text`, each fetched once under `policy`, all at once."""
    found = find_links(text)
    chosen, rest = found[: policy.max_links], found[policy.max_links:]
    if not chosen:
        return LinkReading(left_out=tuple(rest))
    async with open_session(policy) as session:
        results = await asyncio.gather(*(read_link(session, url, policy) for url in chosen))
    return LinkReading(tuple(results), tuple(rest))
