"""The sources line under an answer that searched the web.

Pure. Each URL once, in the order the answer cites them; at most `SHOWN` on the line, in
angle brackets so Discord shows no preview for them; the rest stay behind a button.
Only web addresses are shown: a provider's or a page's odd scheme never becomes a link.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from providers.types import Source

SHOWN = 5
MAX_URL = 500  # a longer address is not shown (Discord would not link it well anyway)
SEPARATOR = " · "


def unique_sources(sources: Iterable[Source]) -> list[Source]:
    """Each web address once, first citation first; a later citation may add the title."""
    kept: dict[str, Source] = {}
    for source in sources:
        url = source.url.strip()
        if not _is_web(url):
            continue
        known = kept.get(url)
        if known is None or (known.title is None and source.title):
            kept[url] = Source(url, known.title if known is not None and known.title else source.title)
    return list(kept.values())


def sources_line(sources: list[Source], label: str) -> str:
    """`-# <label>: <url> · <url>` for the first `SHOWN` sources (empty when there are none)."""
    shown = [f"<{source.url}>" for source in sources[:SHOWN]]
    return f"-# {label}: {SEPARATOR.join(shown)}" if shown else ""


def _is_web(url: str) -> bool:
    if len(url) > MAX_URL or any(c in url for c in "<> \n\r\t"):
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
