"""The pages a chat-completions answer cites (`url_citation` annotations), read leniently."""

from __future__ import annotations

from typing import Any

from providers.types import Source


def url_citations(annotations: Any) -> list[Source]:
    """Each `url_citation` annotation's page, in the order they arrive.

    The documented shape (OpenAI: https://platform.openai.com/docs/api-reference/chat/object
    `message.annotations`, streamed as `delta.annotations`; OpenRouter normalizes every
    search to it: https://openrouter.ai/docs/guides/features/plugins/web-search) is
    `{"type": "url_citation", "url_citation": {"url", "title", "start_index",
    "end_index", "content"?}}`. A citation is extra to the answer, so one that does not
    fit (another type, no http(s) URL, not an object) is left out rather than failing
    the answer; a title that is not text is dropped.
    """
    sources: list[Source] = []
    if not isinstance(annotations, list):
        return sources
    for item in annotations:
        if not isinstance(item, dict) or item.get("type") != "url_citation":
            continue
        citation = item.get("url_citation")
        if not isinstance(citation, dict):
            continue
        url = citation.get("url")
        if not isinstance(url, str) or not url.strip().lower().startswith(("https://", "http://")):
            continue
        title = citation.get("title")
        title = title.strip() if isinstance(title, str) and title.strip() else None
        sources.append(Source(url.strip(), title))
    return sources
