"""A shared REST proxy in front of the fake Discord, queueing as nirn-proxy does.

    async with FakeDiscord(global_limit=10) as fake, FakeRestProxy(fake, global_limit=10) as proxy, \
            running_bot(proxy, client):  # REST through the proxy, the gateway the fake's

Every REST request is forwarded as it came (method, path, query, headers, body) and its
answer returned as Discord gave it. Requests under the global limit (all but interactions
and their webhooks) wait inside the proxy, first come first served, instead of being
answered 429: the way a process sees the limit here is time. The limit is counted so that
the fake Discord never sees more than `global_limit` in any second whatever the delays on
the way: a request fills a slot while it is out and for a window after its answer came
back (it reached Discord in between). `records` keeps, per request, when it arrived, when
it left for Discord and when its answer was back, and the message text it carried.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from tests.support.env_loopback import serve_on_loopback
from tests.support.fake_discord_server import FakeDiscord

EXEMPT = re.compile(r"/(interactions|webhooks)/")
# Headers that belong to one connection, or that aiohttp sets again itself.
_HOP = {"host", "connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding",
        "te", "trailer", "upgrade", "proxy-authorization", "proxy-connection", "date", "server"}
WINDOW = 1.02  # seconds a returned request still fills its slot (Discord's 1 s and a little)


@dataclass
class ProxyRecord:
    method: str
    path: str
    arrived: float  # time.monotonic() when the proxy got it
    left: float = 0.0  # when it left for Discord (after its wait in the queue)
    back: float = 0.0  # when Discord's answer was back
    status: int = 0
    content: str | None = None  # the message text a JSON body carried (a send or an edit)
    held: bool = False  # it waited for the global limit, or behind requests that did

    @property
    def queued(self) -> float:
        """Seconds it waited inside the proxy."""
        return self.left - self.arrived


def message_content(content_type: str, body: bytes) -> str | None:
    """The `content` of a JSON request body, if it has one."""
    if content_type != "application/json" or not body:
        return None
    with contextlib.suppress(ValueError):
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("content"), str):
            return data["content"]
    return None


class FakeRestProxy:
    """`async with FakeRestProxy(fake, global_limit=N) as proxy:`; point REST at `proxy.api_url`."""

    def __init__(self, upstream: FakeDiscord, *, global_limit: int = 50) -> None:
        self.upstream = upstream
        self.global_limit = global_limit
        self.records: list[ProxyRecord] = []
        self._turn = asyncio.Lock()  # first come first served: one request at the head at a time
        self._out = 0  # requests sent to Discord and not back yet
        self._back: deque[float] = deque()  # when the answers within the last window came back
        self._returned = asyncio.Event()
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The fake Discord's: only REST goes through a REST proxy."""
        return self.upstream.gateway_url

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0,
                       watch: asyncio.Future[Any] | None = None) -> None:
        """The fake Discord's `wait_for` (so `running_bot(proxy, client)` can wait on it)."""
        await self.upstream.wait_for(predicate, timeout, watch=watch)

    async def __aenter__(self) -> FakeRestProxy:
        self._session = aiohttp.ClientSession()  # answers come back decoded: no Content-Encoding
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._forward)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _admit(self, record: ProxyRecord) -> None:
        """Wait, in arrival order, until one more request fits the global limit."""
        record.held = self._turn.locked()  # the head waits for the limit: this one queues behind it
        async with self._turn:
            while True:
                now = time.monotonic()
                while self._back and self._back[0] <= now - WINDOW:
                    self._back.popleft()
                if self._out + len(self._back) < self.global_limit:
                    self._out += 1
                    return
                record.held = True
                self._returned.clear()
                wait = self._back[0] + WINDOW - now if self._back else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._returned.wait(), wait)

    def _done(self) -> None:
        self._out -= 1
        self._back.append(time.monotonic())
        self._returned.set()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        path = "/" + request.match_info["tail"]
        record = ProxyRecord(request.method, path, time.monotonic())
        self.records.append(record)
        body = await request.read()
        record.content = message_content(request.content_type, body)
        counted = not EXEMPT.match(path)
        if counted:
            await self._admit(record)
        record.left = time.monotonic()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        try:
            async with self._session.request(request.method, self.upstream.api_url + path, params=request.query,
                                             headers=headers, data=body or None, allow_redirects=False) as answer:
                payload = await answer.read()
                status, answer_headers = answer.status, answer.headers
        finally:
            if counted:
                self._done()
        record.back, record.status = time.monotonic(), status
        kept = {k: v for k, v in answer_headers.items() if k.lower() not in _HOP}
        return web.Response(status=status, body=payload, headers=kept)
