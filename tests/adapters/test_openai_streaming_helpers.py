"""providers/streaming.py: the SSE decoder, the timeouts and transport classification."""

from __future__ import annotations

import asyncio

import aiohttp
import httpx
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.streaming import (
    MAX_PENDING_BYTES,
    MalformedStreamError,
    SSEDecoder,
    StreamInterruptedError,
    StreamTimeoutError,
    classify_transport_error,
    paced_reader,
    reader_of,
    response_timeout,
)


def decode_all(pieces: list[bytes]) -> list:
    """Every event of a whole body read in `pieces`, as the adapters feed the decoder."""
    decoder = SSEDecoder()
    return [event for piece in pieces for event in decoder.feed(piece)] + decoder.finish()


def test_basic_events_and_done():
    body = b'data: {"a":1}\n\ndata: [DONE]\n\n'
    assert decode_all([body]) == [(None, b'{"a":1}'), (None, b"[DONE]")]


def test_crlf_named_events_comments_and_multiline_data():
    body = (
        b": OPENROUTER PROCESSING\r\n\r\n"
        b"event: message_start\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\n"
        b"id: 7\nretry: 10\ndata:no-space\n\n"
        b"event: ping\n\n"
        b"\n\n\n"
    )
    assert decode_all([body]) == [
        ("message_start", b'{"x":\n1}'),
        (None, b"no-space"),
        ("ping", b""),
    ]


def test_lone_cr_line_endings():
    assert decode_all([b"data: a\r\rdata: b\r\r"]) == [(None, b"a"), (None, b"b")]


def test_finish_dispatches_complete_last_event_and_drops_cut_line():
    assert decode_all([b"data: a\n\ndata: b\n"]) == [(None, b"a"), (None, b"b")]
    assert decode_all([b"data: a\n\ndata: {\"cut"]) == [(None, b"a")]
    assert decode_all([b"data: a\r"]) == [(None, b"a")]


def test_utf8_split_across_reads_is_whole():
    body = "data: {\"t\":\"héllo 世界 👋\"}\n\n".encode()
    pieces = [body[i : i + 1] for i in range(len(body))]
    assert decode_all(pieces) == decode_all([body])


def test_non_ascii_event_name_is_malformed():
    with pytest.raises(MalformedStreamError):
        decode_all([b"event: \xff\xfe\ndata: x\n\n"])


def test_unbounded_body_without_boundary_is_malformed():
    decoder = SSEDecoder()
    with pytest.raises(MalformedStreamError):
        for _ in range(MAX_PENDING_BYTES // 65536 + 2):
            decoder.feed(b"x" * 65536)


EVENT = st.builds(
    lambda name, lines, comment: (
        (f": {comment}\n" if comment else "")
        + (f"event: {name}\n" if name else "")
        + "".join(f"data: {line}\n" for line in lines)
    ),
    st.one_of(st.none(), st.sampled_from(["message_start", "ping", "error"])),
    st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12), min_size=1,
             max_size=3),
    st.one_of(st.none(), st.just("keep-alive")),
)


@settings(max_examples=200, deadline=None)
@given(events=st.lists(EVENT, max_size=8), crlf=st.booleans(), data=st.data())
def test_split_invariance(events, crlf, data):
    text = "".join(e + "\n" for e in events)
    if crlf:
        text = text.replace("\n", "\r\n")
    body = text.encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=10)))
    pieces, last = [], 0
    for cut in cuts:
        pieces.append(body[last:cut])
        last = cut
    pieces.append(body[last:])
    assert decode_all(pieces) == decode_all([body])
    assert len(decode_all([body])) == len(events)


def _slow(delays):
    """A reader whose pieces come after these delays (each piece says its delay)."""
    async def pieces():
        for delay in delays:
            await asyncio.sleep(delay)
            yield str(delay).encode()
    return reader_of(pieces())


async def _pieces(read):
    while piece := await read():
        yield float(piece)


async def test_inactivity_timeout_raises_after_a_stall():
    seen = []
    with pytest.raises(StreamTimeoutError):
        async for item in _pieces(paced_reader(_slow([0, 0, 5]), 0.05)):
            seen.append(item)
    assert seen == [0, 0]


async def test_inactivity_timeout_bounds_each_wait_not_the_total():
    items = [i async for i in _pieces(paced_reader(_slow([0.02] * 5), 0.2))]
    assert len(items) == 5
    assert [i async for i in _pieces(paced_reader(_slow([0]), None))] == [0]


async def test_slow_consumer_is_not_a_provider_stall():
    out = []
    async for item in _pieces(paced_reader(_slow([0, 0]), 0.05)):
        await asyncio.sleep(0.1)  # the consumer's own time never counts
        out.append(item)
    assert out == [0, 0]


async def test_response_timeout():
    with pytest.raises(StreamTimeoutError):
        async with response_timeout(0.02):
            await asyncio.sleep(1)
    async with response_timeout(None):
        await asyncio.sleep(0)


@pytest.mark.parametrize(
    "exc,kind,retryable",
    [
        (StreamTimeoutError("no data"), "timeout", True),
        (httpx2.ReadTimeout("read timed out"), "timeout", True),
        (httpx.ConnectTimeout("connect timed out"), "timeout", True),
        (httpx2.ConnectError("All connection attempts failed"), "api_error", False),
        (ConnectionRefusedError(111, "refused"), "api_error", False),
        (httpx2.RemoteProtocolError("peer closed connection"), "provider_overloaded", True),
        (httpx.ReadError("reset"), "provider_overloaded", True),
        (aiohttp.ServerDisconnectedError(), "provider_overloaded", True),
        (aiohttp.ClientPayloadError("incomplete"), "provider_overloaded", True),
        (ConnectionResetError(104, "reset by peer"), "provider_overloaded", True),
        (StreamInterruptedError("ended early"), "provider_overloaded", True),
        (MalformedStreamError("bad json"), "api_error", False),
    ],
)
def test_classify_transport_error(exc, kind, retryable):
    err = classify_transport_error("openai", exc)
    assert err is not None
    assert (err.type, err.retryable) == (kind, retryable)
    assert err.original_error is exc


def test_classify_transport_error_ignores_other_failures():
    assert classify_transport_error("openai", ValueError("x")) is None
