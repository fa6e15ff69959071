"""A local search service speaking SearXNG's, Brave's and Tavily's JSON shapes.

`async with FakeSearchService() as fake:` then point a backend at `fake.url`. Each route
answers with `fake.pages` in its own shape (SearXNG `results[].content`, Brave
`web.results[].description`, Tavily `results[].content`), after checking the credential
the real service wants; `fake.fail(...)` scripts a status, a redirect, a slow answer or a
raw body instead. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.env_loopback import serve_on_loopback

BRAVE_KEY = "brave-test-key-0001"
TAVILY_KEY = "tvly-test-key-0001"


@dataclass
class Page:
    title: str
    url: str
    snippet: str


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any


@dataclass
class Failure:
    status: int = 200
    body: bytes | None = None
    location: str | None = None
    delay: float = 0.0
    pieces: int = 1  # more: streamed in this many writes, without a Content-Length


def pages(count: int) -> list[Page]:
    return [Page(f"Result {n}", f"https://example.org/{n}", f"Snippet number {n}.") for n in range(1, count + 1)]


@dataclass
class FakeSearchService:
    pages: list[Page] = field(default_factory=lambda: pages(3))
    requests: list[Seen] = field(default_factory=list)
    failure: Failure | None = None
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail(self, status: int = 200, *, body: bytes | None = None, location: str | None = None,
             delay: float = 0.0, pieces: int = 1) -> None:
        """Answer every request with this instead (a status, a raw body, a redirect, a delay)."""
        self.failure = Failure(status, body, location, delay, pieces)

    async def __aenter__(self) -> FakeSearchService:
        app = web.Application()
        app.router.add_get("/search", self._searxng)
        app.router.add_post("/search", self._tavily)
        app.router.add_get("/res/v1/web/search", self._brave)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _record(self, request: web.Request) -> web.StreamResponse | None:
        body = await request.json() if request.can_read_body else None
        self.requests.append(Seen(request.method, request.path, dict(request.query), dict(request.headers), body))
        failure = self.failure
        if failure is None:
            return None
        if failure.delay:
            await asyncio.sleep(failure.delay)
        headers = {"Location": failure.location} if failure.location else {}
        if failure.pieces > 1:
            return await self._stream(request, failure)
        return web.Response(status=failure.status, body=failure.body or b"{}", headers=headers,
                            content_type="application/json")

    @staticmethod
    async def _stream(request: web.Request, failure: Failure) -> web.StreamResponse:
        response = web.StreamResponse(status=failure.status, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        body = failure.body or b"{}"
        size = -(-len(body) // failure.pieces)
        for start in range(0, len(body), size):
            await response.write(body[start:start + size])
            await asyncio.sleep(0.01)
        await response.write_eof()
        return response

    @staticmethod
    def _json(payload: Any) -> web.Response:
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")

    async def _searxng(self, request: web.Request) -> web.StreamResponse:
        if (scripted := await self._record(request)) is not None:
            return scripted
        if request.query.get("format") != "json":
            return web.Response(status=403, text="format not enabled")
        return self._json({"query": request.query.get("q"), "number_of_results": len(self.pages),
                           "results": [{"title": p.title, "url": p.url, "content": p.snippet,
                                        "engine": "fake", "score": 1.0} for p in self.pages],
                           "answers": [], "suggestions": [], "infoboxes": []})

    async def _brave(self, request: web.Request) -> web.StreamResponse:
        if (scripted := await self._record(request)) is not None:
            return scripted
        if request.headers.get("X-Subscription-Token") != BRAVE_KEY:
            return web.Response(status=401, text='{"type":"ErrorResponse"}', content_type="application/json")
        count = int(request.query.get("count", "20"))
        return self._json({"type": "search", "query": {"original": request.query.get("q")},
                           "web": {"type": "search", "results": [
                               {"title": p.title, "url": p.url, "description": p.snippet, "type": "search_result"}
                               for p in self.pages[:count]]}})

    async def _tavily(self, request: web.Request) -> web.StreamResponse:
        if (scripted := await self._record(request)) is not None:
            return scripted
        if request.headers.get("Authorization") != f"Bearer {TAVILY_KEY}":
            return web.Response(status=401, text='{"detail":{"error":"Unauthorized"}}',
                                content_type="application/json")
        wanted = self.requests[-1].json or {}
        count = int(wanted.get("max_results", 5))
        return self._json({"query": wanted.get("query"), "answer": None, "images": [], "response_time": 0.1,
                           "results": [{"title": p.title, "url": p.url, "content": p.snippet, "score": 0.9}
                                       for p in self.pages[:count]]})
