"""What an attempt's adapter setup costs, with and without the shared provider clients.

    python bench/client_setup.py [--cycles 200]

Each cycle is what one attempt of a turn does: build the adapter for a key, send one
request to the local replay server, read the short answer to its end and close the
adapter. Measured per family, in the same run:
- own: the adapter builds its own HTTP client (a new TLS context and connection pool)
  and closes it, as every attempt did before the pool;
- shared: the adapter builds only its SDK client, on the `ClientPool`'s shared HTTP
  client (the bot's way now);
- floor: one adapter reused for every request (no setup at all).
Reported: CPU ms per cycle (this process: the replay server runs here too, the same for
all three) and the ratio to the floor. Figures go to bench/results.json as
`client_setup.<family>.<own|shared|floor>.cpu_ms` and `..._ratio_to_floor`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness import Figures, Timing, best, time_await  # noqa: E402

from providers import ChatRequest, Message, create_adapter, normalized_stream  # noqa: E402
from providers.client_pool import ClientPool  # noqa: E402
from tests.support.fake_provider_server import ProviderReplayServer, Reply  # noqa: E402

HELLO = ChatRequest(messages=[Message("user", "hi")])
ROUNDS = 3  # the best of three loops: noise on a shared machine only ever adds

OPENAI_BODY = (
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)
RESPONSES_BODY = (
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n'
    b'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed"}}\n\n'
)
ANTHROPIC_EVENTS = [
    ("message_start", {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                            "content": [], "model": "c",
                                                            "usage": {"input_tokens": 1, "output_tokens": 0}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                                                  "text": "Hi"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                       "usage": {"output_tokens": 1}}),
    ("message_stop", {"type": "message_stop"}),
]
GEMINI_BODY = (
    b'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}],'
    b'"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}\n\n'
)
FAMILIES: dict[str, tuple[Reply, str]] = {
    "openai": (Reply(body=RESPONSES_BODY), "/v1"),  # OpenAI speaks the Responses API
    "openrouter": (Reply(body=OPENAI_BODY), "/v1"),  # chat completions
    "anthropic": (Reply.named_sse(ANTHROPIC_EVENTS), ""),
    "google": (Reply(body=GEMINI_BODY), ""),
}


async def one_answer(adapter: Any) -> None:
    chunks = [chunk async for chunk in normalized_stream(adapter, HELLO)]
    if chunks[-1].type != "done":
        raise SystemExit(f"the replay answer did not complete: {chunks[-1]}")


def cycles(provider: str, base_url: str, count: int, pool: ClientPool | None) -> Callable[[], Awaitable[None]]:
    """`count` attempts, each building its adapter (on `pool` when given) and closing it."""

    async def run() -> None:
        for i in range(count):
            adapter = create_adapter(provider, api_key=f"key-{i % 4}", model="m", base_url=base_url,
                                     timeout=10, clients=pool)
            try:
                await one_answer(adapter)
            finally:
                await adapter.aclose()

    return run


def reused(provider: str, base_url: str, count: int) -> Callable[[], Awaitable[None]]:
    """The floor: `count` requests through one adapter that is never rebuilt."""

    async def run() -> None:
        adapter = create_adapter(provider, api_key="key-0", model="m", base_url=base_url, timeout=10)
        try:
            for _ in range(count):
                await one_answer(adapter)
        finally:
            await adapter.aclose()

    return run


async def best_loop(make: Callable[[], Callable[[], Awaitable[None]]]) -> Timing:
    timings = []
    for _ in range(ROUNDS):
        timing, _ = await time_await(make())
        timings.append(timing)
    return best(timings)


async def measure(server: ProviderReplayServer, provider: str, count: int, figures: Figures) -> None:
    reply, root = FAMILIES[provider]
    server.reply(reply)
    base_url = f"{server.url}{root}"
    await one_answer_warmup(provider, base_url)
    pools: list[ClientPool] = []

    def shared() -> Callable[[], Awaitable[None]]:
        pools.append(ClientPool())
        return cycles(provider, base_url, count, pools[-1])

    own = await best_loop(lambda: cycles(provider, base_url, count, None))
    pooled = await best_loop(shared)
    floor = await best_loop(lambda: reused(provider, base_url, count))
    for pool in pools:
        await pool.aclose()
    print(f"{provider:>9}: CPU ms per attempt  own {own.cpu / count * 1e3:6.2f}   "
          f"shared {pooled.cpu / count * 1e3:6.2f}   floor {floor.cpu / count * 1e3:6.2f}   "
          f"(own/shared {own.cpu / pooled.cpu:4.1f}x, shared/floor {pooled.cpu / floor.cpu:4.2f}x)")
    for name, timing in (("own", own), ("shared", pooled), ("floor", floor)):
        figures.add(f"{provider}.{name}.cpu_ms", timing.cpu / count * 1e3)
        figures.add_ratio(f"{provider}.{name}", timing.cpu, floor.cpu)


async def one_answer_warmup(provider: str, base_url: str) -> None:
    """Import and first-use costs (SDK modules, certifi) are paid before any timing."""
    await cycles(provider, base_url, 2, None)()


async def main(count: int) -> None:
    figures = Figures("client_setup")
    async with ProviderReplayServer() as server:
        for provider in FAMILIES:
            await measure(server, provider, count, figures)
    figures.add("cycles", count)
    print(f"figures written to {figures.write()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=200)
    asyncio.run(main(parser.parse_args().cycles))
