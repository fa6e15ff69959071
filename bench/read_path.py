"""What reading trickled streams costs per chunk: httpx2 or aiohttp under the SDK, asyncio or uvloop.

    python bench/read_path.py [--streams 500] [--seconds 5]

Real providers send one small event per network write (30 chunks/s of 3-6 characters
here, `Trickle`), so a bot with many answers open pays the read path once per chunk,
not once per buffer. Each configuration runs in its own reader process against the
replay server (this process): `--streams` concurrent answers through the chat-completions adapter
(`normalized_stream`, the bot's own path, on one shared `ClientPool`), and as the floor
a bare aiohttp reader with json.loads per event. Reported: the reader process's CPU per
chunk and the ratio to the floor on the same event loop; also how many events arrived
per network read (1.0 means the trickle really was one event per read). Figures go to
bench/results.json as `read_path.<reader>.<loop>.cpu_us_per_chunk` and `..._ratio_to_floor`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness import Figures  # noqa: E402

READERS = ("floor", "httpx", "aiohttp", "delivered", "paced")
PACED_INTERVAL = 0.25  # the bot's default PROVIDER_READ_INTERVAL_MS
LOOPS = ("asyncio", "uvloop")
WARMUP_STREAMS = 4
# The chat-completions trickle, read by a hosted chat provider's adapter (OpenAI itself speaks
# the Responses API since; OpenRouter reads the same format as OpenAI's chat completions did).
CHAT = "openrouter"


def question(i: int) -> dict[str, Any]:
    return {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"question {i}"}]}


async def floor_stream(session: Any, url: str, i: int, interval: float = 0.0) -> tuple[int, int]:
    """A bare reader: aiohttp, split events by blank line, json.loads each. (chunks, reads).

    With `interval` it reads as the bot does (PROVIDER_READ_INTERVAL_MS): a read starts no
    sooner than `interval` seconds after the previous one ended, and the socket is held
    (left unread) in between, as `body_reader(held=True)` holds it, so what the provider
    sends meanwhile comes in one receive. Unpaced, every event is read as it arrives:
    less than the bot does for no floor at all, more work than the bot's paced read does.
    (The bot also reads its first interval eagerly; this floor does not, so it stays a
    floor.)"""
    chunks = reads = 0
    buffer = b""
    async with session.post(f"{url}/v1/chat/completions", json=question(i)) as response:
        async for piece in _pieces(response, interval):
            reads += 1
            buffer += piece
            *events, buffer = buffer.split(b"\n\n")
            for event in events:
                data = event[6:]
                if data == b"[DONE]":
                    continue
                choices = json.loads(data)["choices"]
                chunks += bool(choices and choices[0]["delta"].get("content"))
    return chunks, reads


async def _pieces(response: Any, interval: float) -> Any:
    """The body's network reads, at most one per `interval` (0: as they arrive)."""
    if not interval:
        async for piece in response.content.iter_any():
            yield piece
        return
    loop = asyncio.get_running_loop()
    while True:
        _hold(response, False)
        piece = await response.content.readany()
        if not piece:
            return
        _hold(response, True)
        resume_at = loop.time() + interval
        yield piece
        await asyncio.sleep(max(0.0, resume_at - loop.time()))


def _hold(response: Any, held: bool) -> None:
    """Stop or restart reading the body's socket (no longer ours once the body ended)."""
    connection = response.connection
    transport = connection.transport if connection is not None else None
    if transport is None or transport.is_closing() or transport.is_reading() != held:
        return
    if held:
        transport.pause_reading()
    else:
        transport.resume_reading()


async def read_floor(url: str, streams: int) -> tuple[int, int]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        results = await asyncio.gather(*(floor_stream(session, url, i) for i in range(streams)))
    return sum(r[0] for r in results), sum(r[1] for r in results)


class CountingSink:
    """A channel that keeps nothing: what the stream layer costs without Discord."""

    def __init__(self) -> None:
        self.operations = 0

    async def send(self, content: str, *, reply: bool = False, write: Any = None) -> Any:
        from stream.sink import SentMessage

        self.operations += 1
        return SentMessage(self.operations, 1)

    async def edit(self, message: Any, content: str, *, write: Any = None) -> None:
        self.operations += 1

    def rate_limit(self) -> None:
        return None


async def read_delivered(url: str, streams: int, read_interval: float = 0.0) -> tuple[int, int]:
    """The aiohttp adapter's stream through the stream layer (`run_stream` into a
    `MessageDelivery` paced by one shared channel budget per 5 streams, as in the load
    bench), into a sink that keeps nothing; `paced`: the body read at most once per
    PACED_INTERVAL, as the bot does by default."""
    from providers import ChatRequest, Message, create_adapter, normalized_stream
    from providers.client_pool import ClientPool
    from stream.buffer import MessageDelivery
    from stream.orchestrator import run_stream
    from stream.pacing import ChannelBudgets

    pool = ClientPool("aiohttp", read_interval)
    adapter = create_adapter(CHAT, api_key="sk-bench", model="m", base_url=f"{url}/v1",
                             timeout=60, clients=pool)
    budgets = ChannelBudgets()

    async def one(i: int) -> int:
        request = ChatRequest(messages=[Message("user", f"question {i}")])
        delivery = MessageDelivery(CountingSink(), budget=budgets.for_channel(i // 5))  # type: ignore[arg-type]
        result = await run_stream(normalized_stream(adapter, request), delivery)
        return result.chunks - 1  # the last chunk carries usage, not text

    try:
        counts = await asyncio.gather(*(one(i) for i in range(streams)))
    finally:
        await pool.aclose()
    return sum(counts), 0


async def read_adapter(url: str, streams: int, transport: str) -> tuple[int, int]:
    from providers import ChatRequest, Message, create_adapter, normalized_stream
    from providers.client_pool import ClientPool

    pool = ClientPool(transport)  # type: ignore[arg-type]
    adapter = create_adapter(CHAT, api_key="sk-bench", model="m", base_url=f"{url}/v1",
                             timeout=60, clients=pool)

    async def one(i: int) -> int:
        request = ChatRequest(messages=[Message("user", f"question {i}")])
        return len([c async for c in normalized_stream(adapter, request) if c.type == "text"])

    try:
        counts = await asyncio.gather(*(one(i) for i in range(streams)))
    finally:
        await pool.aclose()
    return sum(counts), 0


async def read(reader: str, url: str, streams: int) -> dict[str, float]:
    """Runs in the reader process: its own CPU over the whole read, and what it read.

    A few untimed streams first: first-use costs (SDK models, TLS context) are not per chunk.
    """
    readers = {"floor": read_floor, "delivered": read_delivered,
               "paced": lambda u, n: read_delivered(u, n, PACED_INTERVAL)}
    read_all = readers.get(reader) or (lambda u, n: read_adapter(u, n, reader))
    await read_all(url, WARMUP_STREAMS)
    cpu, wall = time.process_time(), time.perf_counter()
    chunks, reads = await read_all(url, streams)
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
            "chunks": chunks, "reads": reads}


def reader_main(reader: str, loop: str, url: str, streams: int) -> None:
    import aiohttp  # noqa: F401 - imports are paid before the timed read
    import openai  # noqa: F401

    import providers.openai_compat.adapter  # noqa: F401
    if loop == "uvloop":
        import uvloop

        result = uvloop.run(read(reader, url, streams))
    else:
        result = asyncio.run(read(reader, url, streams))
    print(json.dumps(result))


async def run_reader(reader: str, loop: str, url: str, streams: int) -> dict[str, float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--reader", reader, "--loop", loop, "--url", url,
        "--streams", str(streams), stdout=subprocess.PIPE, cwd=ROOT)
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"the {reader}/{loop} reader failed (exit {process.returncode})")
    return json.loads(out.decode().strip().splitlines()[-1])


async def main(streams: int, seconds: float) -> None:
    from tests.support.fake_provider_server import ProviderReplayServer, Reply, Trickle

    figures = Figures("read_path")
    trickle = Trickle(seconds=seconds)
    expected = streams * round(trickle.rate * trickle.seconds)
    async with ProviderReplayServer() as server:
        server.reply(Reply(trickle=trickle))
        for loop in LOOPS:
            floor_us = None
            for reader in READERS:
                result = await run_reader(reader, loop, server.url, streams)
                if result["chunks"] != expected:
                    raise SystemExit(f"{reader}/{loop} read {result['chunks']} chunks, expected {expected}")
                us = figures.add(f"{reader}.{loop}.cpu_us_per_chunk", result["cpu"] / result["chunks"] * 1e6)
                floor_us = floor_us or us
                ratio = figures.add_ratio(f"{reader}.{loop}", us, floor_us)
                per_read = f"   {result['chunks'] / result['reads']:.2f} events/read" if result["reads"] else ""
                print(f"{reader:>8} on {loop:<8} {us:7.1f} µs CPU per chunk   {ratio:4.2f}x floor{per_read}")
    figures.add("streams", streams)
    print(f"figures written to {figures.write()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--reader", choices=READERS)
    parser.add_argument("--loop", choices=LOOPS, default="asyncio")
    parser.add_argument("--url")
    args = parser.parse_args()
    if args.reader:
        reader_main(args.reader, args.loop, args.url, args.streams)
    else:
        import uvloop  # the server side on the faster loop, so it keeps the trickle on schedule

        uvloop.run(main(args.streams, args.seconds))
