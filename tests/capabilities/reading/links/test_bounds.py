"""Each page's bounds, against real local servers: size, time, type, redirects, status."""

from __future__ import annotations

import asyncio
import time
import zlib

import pytest
from aiohttp import web

from bot.capabilities.reading.links import LinkFailure, LinkPage, read_links
from tests.capabilities.reading.links.servers import PageServer, policy_with

MB = 1024 * 1024


@pytest.fixture
async def public():
    async with PageServer() as server:
        yield server


async def _one(url: str, **bounds):
    reading = await read_links(url, policy_with(**bounds))
    return reading.results[0]


def _reason(result) -> str:
    assert isinstance(result, LinkFailure), result
    return result.reason


class Endless:
    """A body that never ends: 64 KB pieces until the client hangs up; counts what it wrote."""

    def __init__(self, content_type: str = "text/html", pause: float = 0.0, piece: int = 64 * 1024,
                 declared: int | None = None) -> None:
        self.content_type, self.pause, self.piece, self.declared = content_type, pause, piece, declared
        self.written = 0
        self.cut = asyncio.Event()

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": self.content_type})
        if self.declared is not None:
            response.content_length = self.declared
        await response.prepare(request)
        chunk = b"x" * self.piece
        try:
            while self.written < 200 * MB:
                await response.write(chunk)
                self.written += len(chunk)
                if self.pause:
                    await asyncio.sleep(self.pause)
        except (ConnectionError, asyncio.CancelledError):
            self.cut.set()
            raise
        return response


async def test_oversized_body_stopped_at_2_mb_without_reading_it_all(public):
    body = Endless()
    public.route("/huge", body)
    started = time.monotonic()
    result = await _one(public.url("/huge"))
    assert _reason(result) == "too_large"
    assert "more than 2097152 bytes" in result.detail
    await asyncio.wait_for(body.cut.wait(), 5)  # the client hung up mid-body
    assert body.written < 20 * MB  # what the sockets' buffers took, not the 200 MB on offer
    assert time.monotonic() - started < 5


async def test_declared_oversized_body_refused_before_reading(public):
    body = Endless(declared=50 * MB, pause=0.5)  # 64 KB every half second: 400 s to send
    public.route("/declared", body)
    started = time.monotonic()
    result = await _one(public.url("/declared"))
    assert _reason(result) == "too_large" and "declares 52428800 bytes" in result.detail
    assert time.monotonic() - started < 2


async def test_a_body_at_the_bound_is_read(public):
    public.page("/big", "a" * (2 * MB), "text/plain")
    result = await _one(public.url("/big"))
    assert isinstance(result, LinkPage) and result.cut and len(result.text) <= 20_000


async def test_slow_body_stopped_at_the_time_bound(public):
    body = Endless(pause=0.1, piece=10)  # a trickle that would go on for hours
    public.route("/slow", body)
    started = time.monotonic()
    result = await _one(public.url("/slow"), timeout=0.5)
    elapsed = time.monotonic() - started
    assert _reason(result) == "timeout" and "0.5 s" in result.detail
    assert 0.4 < elapsed < 2.5
    await asyncio.wait_for(body.cut.wait(), 5)


async def test_slow_headers_stopped_at_the_time_bound(public):
    async def silent(_request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response(text="late")
    public.route("/silent", silent)
    started = time.monotonic()
    assert _reason(await _one(public.url("/silent"), timeout=0.3)) == "timeout"
    assert time.monotonic() - started < 2


async def test_the_time_bound_covers_the_redirects_too(public):
    async def slow_redirect(request: web.Request) -> web.Response:
        await asyncio.sleep(0.2)
        return web.Response(status=302, headers={"Location": f"/r{int(request.path[2:]) + 1}"})
    for hop in range(4):
        public.route(f"/r{hop}", slow_redirect)
    assert _reason(await _one(public.url("/r0"), timeout=0.5, max_redirects=10)) == "timeout"


@pytest.mark.parametrize("content_type", ["application/json", "image/png", "application/octet-stream",
                                          "text/css", "application/xhtml+xml"])
async def test_wrong_content_type_refused(public, content_type):
    public.page("/thing", b"{}", content_type)
    result = await _one(public.url("/thing"))
    assert _reason(result) == "wrong_type" and content_type in result.detail


async def test_a_body_without_content_type_refused(public):
    async def bare(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"anything")
        return response
    public.route("/bare", bare)
    assert _reason(await _one(public.url("/bare"))) == "wrong_type"


async def test_a_fake_pdf_refused(public):
    public.page("/report.pdf", b"<html>not a pdf</html>", "application/pdf")
    assert _reason(await _one(public.url("/report.pdf"))) == "wrong_type"


async def test_too_many_redirects(public):
    for hop in range(5):
        public.redirect(f"/r{hop}", f"/r{hop + 1}", status=301)
    public.page("/r5", "arrived", "text/plain")
    result = await _one(public.url("/r0"))
    assert _reason(result) == "too_many_redirects"
    assert public.paths == ["/r0", "/r1", "/r2", "/r3"]  # three followed, the fourth not


async def test_three_redirects_are_followed(public):
    for hop, status in enumerate((301, 302, 307)):
        public.redirect(f"/r{hop}", f"/r{hop + 1}", status=status)
    public.page("/r3", "arrived", "text/plain")
    result = await _one(public.url("/r0"))
    assert isinstance(result, LinkPage) and result.text == "arrived"


@pytest.mark.parametrize("status", [404, 403, 503])
async def test_error_status(public, status):
    public.page("/x", "<p>no</p>", status=status)
    result = await _one(public.url("/x"))
    assert _reason(result) == "http_status" and str(status) in result.detail


async def test_redirect_without_location(public):
    async def nowhere(_request: web.Request) -> web.Response:
        return web.Response(status=302)
    public.route("/x", nowhere)
    assert _reason(await _one(public.url("/x"))) == "http_status"


async def test_a_closed_port_is_unreachable(public):
    async with PageServer() as gone:
        url = gone.url("/")
    assert _reason(await _one(url)) == "unreachable"


async def test_a_compressed_bomb_stopped_at_the_bound(public):
    """200 MB of zeros in 200 KB of gzip: the bound holds on the decompressed bytes."""
    packer, zeros = zlib.compressobj(9, zlib.DEFLATED, 31), bytes(MB)
    bomb = b"".join(packer.compress(zeros) for _ in range(200)) + packer.flush()

    async def gzipped(_request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"})
    public.route("/bomb", gzipped)
    started = time.monotonic()
    assert _reason(await _one(public.url("/bomb"))) == "too_large"
    assert time.monotonic() - started < 2
