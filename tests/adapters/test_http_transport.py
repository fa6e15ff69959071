"""What the SDK clients send through (providers/http_transport.py), with the real SDKs.

The pool's transport (PROVIDER_HTTP_TRANSPORT) is what every family's shared client
uses; an answer reads the same through either; a compressed body is still decoded;
the per-stream inactivity timer ends with its stream and never turns somebody else's
cancellation into a timeout; and the settings that choose the transport and the event
loop are bounded. The SSRF suite (test_ssrf.py) runs on both transports.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from bot.__main__ import run_on_loop
from bot.settings import SettingsError, load_settings
from providers import create_adapter, normalized_stream
from providers.client_pool import ClientPool
from providers.http_transport import HELD_PIECE_READER, TRANSPORTS, body_reader, sdk_http_client
from providers.streaming import PieceReader, StreamTimeoutError, paced_reader, reader_of
from tests.support import data_anthropic, data_gemini, data_openai, data_openai_responses
from tests.support.drive_adapter import HELLO, connection, summarize
from tests.support.fake_provider_server import Reply, Trickle

REPLIES = {
    "openai": Reply(body=data_openai_responses.sse_body(data_openai_responses.TEXT)),  # the Responses API
    "openrouter": Reply(body=data_openai.sse_body(data_openai.TEXT)),  # chat completions
    "anthropic": Reply.named_sse(data_anthropic.ANTHROPIC_REDACTED),
    "google": Reply(body=data_gemini.GEMINI_THINK_TEXT),
}
OPENAI_BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hello"}]}


def shared_transport_name(pool: ClientPool) -> str:
    """The transport of the pool's one shared HTTP client (beside it, the OpenAI family's
    shared SDK client, which sends through it)."""
    (client,) = [c for key, c in pool.shared().items() if not key.family.endswith(".sdk")]
    http = getattr(client, "async_client", client)  # Gemini's bundle holds its httpx2 client
    return type(http._transport).__name__


@pytest.mark.parametrize("provider", list(REPLIES))
async def test_every_family_answers_the_same_through_either_transport(provider_server, provider):
    texts = {}
    for transport in TRANSPORTS:
        provider_server.reply(REPLIES[provider])
        pool = ClientPool(transport)
        adapter = create_adapter(provider, **connection(provider, provider_server.url), timeout=10, clients=pool)
        outcome = summarize([c async for c in normalized_stream(adapter, HELLO)])
        assert outcome.error is None and outcome.done is not None, outcome.chunks
        texts[transport] = outcome.text
        expected = "AiohttpTransport" if transport == "aiohttp" else "AsyncHTTPTransport"
        assert shared_transport_name(pool) == expected
        await pool.aclose()
    assert texts["aiohttp"] == texts["httpx"] != ""


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_gzip_encoded_event_stream_is_still_decoded(provider_server, transport):
    body = data_openai_responses.sse_body(data_openai_responses.TEXT)
    provider_server.reply(Reply(body=gzip.compress(body), headers={"Content-Encoding": "gzip"}))
    plain = Reply(body=body)
    pool = ClientPool(transport)
    adapter = create_adapter("openai", **connection("openai", provider_server.url), timeout=10, clients=pool)
    zipped = summarize([c async for c in normalized_stream(adapter, HELLO)])
    provider_server.reply(plain)
    unzipped = summarize([c async for c in normalized_stream(adapter, HELLO)])
    await pool.aclose()
    assert zipped.error is None and zipped.text == unzipped.text != ""


def _pieces(gate: asyncio.Event) -> PieceReader:
    """b"1", then b"2" once `gate` is set, then the end."""
    async def pieces() -> AsyncIterator[bytes]:
        yield b"1"
        await gate.wait()
        yield b"2"
    return reader_of(pieces())


async def _read_all(read: PieceReader) -> list[bytes]:
    return [piece async for piece in _until_end(read)]


async def _until_end(read: PieceReader) -> AsyncIterator[bytes]:
    while piece := await read():
        yield piece


async def test_an_outside_cancellation_is_not_a_timeout() -> None:
    gate = asyncio.Event()
    stream = paced_reader(_pieces(gate), 60)
    task = asyncio.create_task(_read_all(stream))
    await asyncio.sleep(0)  # the reader waits for the second item
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_stall_is_a_timeout_and_an_ended_stream_leaves_no_timer() -> None:
    stalled = paced_reader(_pieces(asyncio.Event()), 0.01)
    with pytest.raises(StreamTimeoutError):
        await _read_all(stalled)
    gate = asyncio.Event()
    gate.set()
    finished = paced_reader(_pieces(gate), 60)
    assert await _read_all(finished) == [b"1", b"2"]
    assert finished._timer is None  # type: ignore[attr-defined]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


class _Trickled:
    """`count` pieces, one every `gap` seconds; a read takes all that have arrived (or
    waits for the next), as a transport's buffer hands them over. Records when reads start."""

    def __init__(self, count: int, gap: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.count, self.gap, self.began = count, gap, self.loop.time()
        self.taken = 0
        self.starts: list[float] = []

    async def read(self) -> bytes:
        now = self.loop.time()
        self.starts.append(now)
        if self.taken == self.count:
            return b""
        arrived = min(self.count, int((now - self.began) / self.gap) + 1)
        if arrived <= self.taken:
            await asyncio.sleep(self.began + self.taken * self.gap - now)
            arrived = self.taken + 1
        piece = b"".join(b"%d," % i for i in range(self.taken, arrived))
        self.taken = arrived
        return piece


async def test_paced_reads_take_what_arrived_an_interval_apart_and_lose_nothing() -> None:
    interval, source = 0.05, _Trickled(count=30, gap=0.01)
    pieces = await _read_all(paced_reader(source.read, None, interval=interval))
    assert b"".join(pieces) == b"".join(b"%d," % i for i in range(30))  # whole and in order
    starts = source.starts
    assert starts[1] - starts[0] < interval  # the first words are read as they arrive
    paced = [later - earlier for earlier, later in itertools.pairwise(starts) if earlier >= starts[0] + interval]
    assert paced and all(gap >= interval - 1e-3 for gap in paced), paced
    assert len(starts) < 20  # 30 pieces in far fewer reads
    assert await _read_all(reader_of(_from_list([b"a", b"", b"b"]))) == [b"a", b"b"]  # empty is not the end


async def test_the_wait_between_paced_reads_is_not_a_stall() -> None:
    """Past the eager start each read waits 0.1 s for its turn, longer than the 0.04 s
    timeout: only the read itself is timed (a piece arrives every 0.01 s)."""
    source = _Trickled(count=30, gap=0.01)
    pieces = await _read_all(paced_reader(source.read, 0.04, interval=0.1))
    assert b"".join(pieces) == b"".join(b"%d," % i for i in range(30))
    assert len(source.starts) < 20  # the reads were spaced out: the waits happened


async def _from_list(pieces: list[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


async def test_a_paced_stream_arrives_whole_and_in_order(provider_server) -> None:
    """A trickled answer read once per 50 ms is the same answer as read event by event."""
    texts = []
    for interval in (0.0, 0.05):
        provider_server.reply(Reply(trickle=Trickle(rate=60.0, seconds=0.5, form="responses")))
        pool = ClientPool("aiohttp", read_interval=interval)
        adapter = create_adapter("openai", **connection("openai", provider_server.url), timeout=10, clients=pool)
        outcome = summarize([c async for c in normalized_stream(adapter, HELLO)])
        await pool.aclose()
        assert outcome.error is None and outcome.done is not None, outcome.chunks
        texts.append(outcome.text)
    assert texts[0] == texts[1] == provider_server.requests[-1].text != ""


async def test_a_held_body_is_not_read_between_paced_reads_and_loses_nothing(provider_server) -> None:
    """Between two paced reads the socket is left unread (what the provider writes waits in
    the kernel and comes in one receive); the answer arrives whole, and the connection goes
    back to the pool reading, so the next request on it is answered."""
    provider_server.reply(Reply(trickle=Trickle(rate=60.0, seconds=0.6)))
    client = sdk_http_client(httpx2.AsyncClient, transport="aiohttp")
    paused_between: list[bool] = []
    async with client.stream("POST", f"{provider_server.url}/v1/chat/completions", json=OPENAI_BODY) as response:
        read = body_reader(response, held=True)
        body = b""
        while piece := await read():
            body += piece
            connection = response.extensions[HELD_PIECE_READER].__self__._response.connection  # the aiohttp body's
            if connection is not None:  # None once the body ended: aiohttp took the connection back
                paused_between.append(not connection.transport.is_reading())
            await asyncio.sleep(0.1)  # a paced reader's interval
    events = [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: {")]
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    assert paused_between and all(paused_between)
    assert text == provider_server.requests[-1].text != ""  # none lost...
    assert len(paused_between) < len(events) / 3  # ...with several events a read
    provider_server.reply(Reply(body=data_openai.sse_body(data_openai.TEXT)))
    again = await asyncio.wait_for(client.post(f"{provider_server.url}/v1/chat/completions", json=OPENAI_BODY), 5)
    assert again.status_code == 200 and b"data:" in again.content
    await client.aclose()


async def test_a_held_body_closed_halfway_leaves_no_connection_held(provider_server) -> None:
    """An answer stopped halfway (its body closed while its socket is held): its
    connection is closed, not handed back to the pool held, and the next requests are
    answered."""
    client = sdk_http_client(httpx2.AsyncClient, transport="aiohttp")
    provider_server.reply(Reply(trickle=Trickle(rate=60.0, seconds=2.0)))
    async with client.stream("POST", f"{provider_server.url}/v1/chat/completions", json=OPENAI_BODY) as response:
        assert await body_reader(response, held=True)()  # one piece, then the socket is held
        socket = response.extensions[HELD_PIECE_READER].__self__._response.connection.transport
        assert not socket.is_reading()
    assert socket.is_closing()
    for _ in range(2):
        provider_server.reply(Reply(body=data_openai.sse_body(data_openai.TEXT)))
        answer = await asyncio.wait_for(client.post(f"{provider_server.url}/v1/chat/completions",
                                                    json=OPENAI_BODY), 5)
        assert answer.status_code == 200 and b"data:" in answer.content
    await client.aclose()


def test_transport_and_event_loop_settings_are_bounded() -> None:
    settings = load_settings(_env_file=None, PROVIDER_HTTP_TRANSPORT=" HTTPX ", EVENT_LOOP="AsyncIO")
    assert (settings.PROVIDER_HTTP_TRANSPORT, settings.EVENT_LOOP) == ("httpx", "asyncio")
    defaults = load_settings(_env_file=None)
    assert (defaults.PROVIDER_HTTP_TRANSPORT, defaults.EVENT_LOOP) == ("aiohttp", "uvloop")
    assert load_settings(_env_file=None).PROVIDER_READ_INTERVAL_MS == 250
    for name, value in (("PROVIDER_HTTP_TRANSPORT", "requests"), ("EVENT_LOOP", "trio"),
                        ("PROVIDER_READ_INTERVAL_MS", "5000"), ("PROVIDER_READ_INTERVAL_MS", "-1")):
        with pytest.raises(SettingsError, match=name):
            load_settings(_env_file=None, **{name: value})


@pytest.mark.parametrize("choice,module", [("uvloop", "uvloop"), ("asyncio", "asyncio")])
def test_the_bot_runs_on_the_chosen_event_loop(choice: str, module: str) -> None:
    seen: list[str] = []

    async def main() -> None:
        seen.append(type(asyncio.get_running_loop()).__module__.split(".")[0])

    run_on_loop(load_settings(_env_file=None, EVENT_LOOP=choice), main())
    assert seen == [module]
