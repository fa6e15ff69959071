"""Real local web servers for the link reader's tests, and the policy that reaches them.

Every server listens on loopback, which links may not reach. The tests admit one exact
address as the stand-in for a public server, 127.0.0.2 (`also_allowed`), and resolve
names under the reserved `.test` domain from a fixed table; 127.0.0.1, where the
"internal" server listens, stays refused like any loopback address. System DNS cannot
resolve `.test` names, so a request that gets through proves the client connected to the
address the policy checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bot.capabilities.reading.links import LinkPolicy
from providers.endpoint_check import EndpointRejected, IPAddress

PUBLIC_STAND_IN = "127.0.0.2"
INTERNAL = "127.0.0.1"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class TableResolver:
    """Answers from a table, one answer list per call (the last one repeats); records calls."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        answers = self.table.get(host)
        if answers is None:
            raise EndpointRejected("unresolvable", f"The host {host} could not be resolved (not in the table).")
        turn = min(sum(1 for h in self.calls if h == host), len(answers) - 1)
        self.calls.append(host)
        return [ipaddress.ip_address(a) for a in answers[turn]]


def policy_with(table: dict[str, list[list[str]]] | None = None, **bounds: Any) -> LinkPolicy:
    """A link policy admitting the public stand-in, names resolved from `table`."""
    return LinkPolicy(also_allowed=frozenset({ipaddress.ip_address(PUBLIC_STAND_IN)}),
                      resolver=TableResolver(table or {}), **bounds)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]


@dataclass
class PageServer:
    """An aiohttp server on `host` answering the routes a test adds; records every request."""

    host: str = PUBLIC_STAND_IN
    port: int = 0
    seen: list[Seen] = field(default_factory=list)
    _routes: dict[str, Handler] = field(default_factory=dict)
    _runner: web.AppRunner | None = None

    def route(self, path: str, handler: Handler) -> None:
        self._routes[path] = handler

    def page(self, path: str, body: bytes | str, content_type: str = "text/html; charset=utf-8",
             status: int = 200) -> None:
        data = body.encode() if isinstance(body, str) else body

        async def answer(_request: web.Request) -> web.Response:
            return web.Response(body=data, status=status, headers={"Content-Type": content_type})
        self.route(path, answer)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        async def answer(_request: web.Request) -> web.Response:
            return web.Response(status=status, headers={"Location": location})
        self.route(path, answer)

    def url(self, path: str, host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"

    @property
    def paths(self) -> list[str]:
        return [s.path for s in self.seen]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(Seen(request.path_qs, dict(request.headers)))
        handler = self._routes.get(request.path)
        if handler is None:
            return web.Response(status=404, text="not here")
        return await handler(request)

    async def __aenter__(self) -> PageServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


ARTICLE_HTML = """<!doctype html>
<html><head><title>How kettles boil | The Kettle Report</title>
<meta charset="utf-8"></head>
<body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop our kettles</a></li>
<li><a href="/about">About us</a></li><li><a href="/login">Sign in</a></li></ul></nav></header>
<aside class="sidebar"><h3>Trending</h3><ul><li><a href="/t1">Ten teapots ranked</a></li>
<li><a href="/t2">Subscribe to the newsletter</a></li></ul></aside>
<main><article>
<h1>How kettles boil</h1>
<p>A kettle heats water with an element at its base until the water reaches one hundred
degrees Celsius at sea level, which takes about three minutes for a full litre.</p>
<p>Steam then rises through the spout, and a bimetallic strip near the handle bends once
it is warm enough, which switches the element off before the kettle boils dry.</p>
<p>Limescale on the element slows all of this down, so descaling every month with a mild
acid such as citric acid keeps the kettle fast and saves a little electricity.</p>
</article></main>
<footer><p>Copyright 2026 Kettle Corp. All rights reserved.</p>
<p><a href="/privacy">Privacy policy</a> · <a href="/cookies">Cookie settings</a></p></footer>
</body></html>"""

# The smallest file the PDF readers accept: a header, one empty page, its cross-reference table.
TINY_PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
            b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\n"
            b"trailer<</Root 1 0 R>>\n%%EOF\n")
