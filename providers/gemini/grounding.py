"""Grounding with Google Search: the sources and queries of one stream (pure, no I/O).

A response that searched carries `groundingMetadata` on its candidate:

- `webSearchQueries`: the queries Google searched for;
- `groundingChunks`: the pages, each `{"web": {"uri", "title"}}` (on the Gemini API the
  uri is Google's redirect to the page, and the title is usually the page's domain);
- `groundingSupports`: which part of the answer each page supports, a `segment`
  (`partIndex`, `startIndex`, `endIndex`, in bytes of the part) with the
  `groundingChunkIndices` of the pages that support it.

The metadata may come on any payload (usually the last ones) and may repeat. Each
payload's supports are resolved against the same payload's chunks as it arrives
(`read_grounding`, into the stream's own `Grounding`); the sources come out once, at
the end (`Grounding.sources`): in the order the answer cites them (payloads in order,
within one by segment part and start; proto3 JSON leaves a zero index out, so a missing
index is 0), each page once at its first citation, then every page never cited in the
order it came. The metadata is advisory: a malformed piece of it (a wrong type, an index
out of range, an address that is not http(s)) is left out, it never fails the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from providers.done_report import count
from providers.types import Source

Citation = tuple[int, int, int, int]  # (payload, part, start, order within the payload)


@dataclass(slots=True)
class Grounding:
    """What one stream's grounding metadata said so far; made fresh with its GeminiStream."""

    seen: bool = False  # some payload carried a groundingMetadata object
    queries: list[str] = field(default_factory=list)  # each once, in order, empty ones left out
    titles: dict[str, str | None] = field(default_factory=dict)  # url -> first title, in arrival order
    cited: dict[str, Citation] = field(default_factory=dict)  # url -> its first citation
    payloads: int = 0

    def sources(self) -> list[Source] | None:
        """The pages, cited ones in citation order, then the rest; None when nothing grounded."""
        if not self.seen:
            return None
        first = sorted(self.cited, key=self.cited.__getitem__)
        rest = [url for url in self.titles if url not in self.cited]
        return [Source(url, self.titles[url]) for url in (*first, *rest)]

    def searches(self) -> list[str] | None:
        return list(self.queries) if self.seen else None


def _web_address(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    url = value.strip()
    if not url.lower().startswith(("https://", "http://")) or any(ch <= " " for ch in url):
        return None
    return url


def _page(chunk: Any) -> Source | None:
    """A grounding chunk's web page, or None (not a web chunk, or malformed)."""
    web = chunk.get("web") if isinstance(chunk, dict) else None
    if not isinstance(web, dict):
        return None
    url = _web_address(web.get("uri"))
    if url is None:
        return None
    title = web.get("title")
    if not isinstance(title, str) or not title.strip():
        title = web.get("domain")  # Vertex AI names the domain apart
    return Source(url, title.strip() if isinstance(title, str) and title.strip() else None)


def _place(segment: Any) -> tuple[int, int] | None:
    """(part, start) of a support's segment; None when an index is not a whole number."""
    if segment is None:
        return 0, 0
    if not isinstance(segment, dict):
        return None
    part, start = segment.get("partIndex", 0), segment.get("startIndex", 0)
    part, start = count(0 if part is None else part), count(0 if start is None else start)
    if part is None or start is None:
        return None
    return part, start


def read_grounding(grounding: Grounding, metadata: Any) -> None:
    """Fold one payload's `groundingMetadata` into the stream's `Grounding`."""
    if not isinstance(metadata, dict):
        return
    grounding.seen = True
    grounding.payloads += 1
    queries = metadata.get("webSearchQueries")
    if isinstance(queries, list):
        for query in queries:
            # Empty queries appear in the list; Google does not bill them either.
            if isinstance(query, str) and query.strip() and query not in grounding.queries:
                grounding.queries.append(query)
    chunks = metadata.get("groundingChunks")
    pages = [_page(chunk) for chunk in chunks] if isinstance(chunks, list) else []
    for page in pages:
        if page is not None and not grounding.titles.get(page.url):
            grounding.titles[page.url] = page.title
    supports = metadata.get("groundingSupports")
    if not isinstance(supports, list):
        return
    order = 0
    for support in supports:
        if not isinstance(support, dict):
            continue
        place = _place(support.get("segment"))
        indices = support.get("groundingChunkIndices")
        if place is None or not isinstance(indices, list):
            continue
        for index in indices:
            index = count(index)
            if index is None or not 0 <= index < len(pages) or pages[index] is None:
                continue
            url = pages[index].url  # type: ignore[union-attr]
            citation = (grounding.payloads, *place, order)
            order += 1
            if url not in grounding.cited or citation < grounding.cited[url]:
                grounding.cited[url] = citation
