"""What every search backend returns, and the one failure they raise.

Bounds live here so every backend keeps them alike: at most `MAX_RESULTS` results, each
title, snippet and URL cut to a size a model reads cheaply, control characters and runs
of whitespace folded (a result is one line of data, never a layout of its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

MAX_RESULTS = 5


def asked_for(limit: int) -> int:
    """How many results to ask a service that takes a count for: twice what is kept (at
    most 20, what Brave and Tavily allow), so entries dropped here do not shorten the list."""
    return max(1, min(2 * min(limit, MAX_RESULTS), 20))
TITLE_LIMIT = 200
SNIPPET_LIMIT = 400
URL_LIMIT = 500
_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchFailed(Exception):
    """A search that produced no results to use; the message names the service and what
    went wrong (status, timeout, refused address), never a key or a request header."""


class SearchBackend(Protocol):
    """One search service's client."""

    name: str

    async def search(self, query: str, limit: int) -> list[SearchResult]: ...

    async def close(self) -> None: ...


def clip(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks a cut)."""
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def bounded(candidates: Iterable[tuple[object, object, object]], limit: int) -> list[SearchResult]:
    """The first `limit` well-formed (title, url, snippet) triples as results.

    An entry without an http(s) URL is skipped (nothing to cite); a missing title becomes
    the URL, a missing snippet empty. Duplicated URLs count once.
    """
    results: list[SearchResult] = []
    seen: set[str] = set()
    for title, url, snippet in candidates:
        if len(results) >= min(limit, MAX_RESULTS):
            break
        if not isinstance(url, str) or not url.startswith(("http://", "https://")) or len(url) > URL_LIMIT:
            continue
        url = clip(url, URL_LIMIT)
        if url in seen or " " in url:
            continue
        seen.add(url)
        results.append(SearchResult(title=clip(title if isinstance(title, str) and title.strip() else url,
                                                TITLE_LIMIT),
                                    url=url,
                                    snippet=clip(snippet if isinstance(snippet, str) else "", SNIPPET_LIMIT)))
    return results
