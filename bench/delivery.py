"""How fast streamed text reaches Discord, against the fake Discord (report only).

    python bench/delivery.py [--slow-seconds 10]

For a fast stream (6,000 characters with a fenced block, no delay between events) and a
slow one (events 0.1 s apart), a real discord.py client delivers the real OpenAI-family
adapter's stream through `run_stream` + `MessageDelivery` + `DiscordMessageSink` into the
fake Discord, which enforces Discord's 5-per-5-s message bucket. Reported:
- first message: from the first visible text chunk leaving the adapter to the fake
  storing the first message;
- edit lag p50/p95: for every text chunk, from its arrival to the first message state on
  the fake that contains it (the pacing, not the network, dominates this);
- 429s the fake answered;
- shown s: when the last update reached Discord; return s: when `run_stream` returned
  (discord.py holds the request that empties a bucket until the bucket resets).
The baseline, measured in the same run, is one bare `channel.send` round trip through
discord.py to the fake (median of three); times are also shown as multiples of it. Figures
go to bench/results.json as `delivery.<fast|slow>.<figure>` (and `..._ratio_to_baseline`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import discord  # noqa: E402
from harness import Figures, time_await  # noqa: E402

from bot.edge.sink import DiscordMessageSink  # noqa: E402
from providers import ChatRequest, Message, create_adapter, normalized_stream  # noqa: E402
from providers.types import ProcessedChunk  # noqa: E402
from stream.buffer import STREAMING_INDICATOR, MessageDelivery  # noqa: E402
from stream.orchestrator import run_stream  # noqa: E402
from tests.support.data_openai import long_answer_with_code, openai_stream  # noqa: E402
from tests.support.drive_discord_client import fast_ready_kwargs, running_bot  # noqa: E402
from tests.support.fake_discord_server import FakeDiscord  # noqa: E402
from tests.support.fake_provider_server import ProviderReplayServer  # noqa: E402


@dataclass
class Report:
    name: str
    key: str  # its part of the results.json keys
    chars: int
    seconds: float
    last_update: float
    first_message: float
    lag_p50: float
    lag_p95: float
    updates: int
    messages: int
    rate_limited: int


async def _timed(chunks: AsyncIterator[ProcessedChunk], arrivals: list[tuple[float, int]]) -> AsyncIterator[ProcessedChunk]:
    total = 0
    async for chunk in chunks:
        if chunk.type == "text" and chunk.content:
            total += len(chunk.content)
            arrivals.append((time.monotonic(), total))
        yield chunk


def _updates(fake: FakeDiscord) -> list[tuple[float, int]]:
    """(time, characters of the answer visible on Discord) for every send and edit."""
    events: list[tuple[float, int]] = []
    before = 0
    for m in fake.bot_messages(fake.channel_id):
        times = [m.created_at, *m.edit_times]
        for at, content in zip(times, m.history, strict=False):
            events.append((at, before + len(content.replace(STREAMING_INDICATOR, "").strip())))
        before += len(m.content)
    return sorted(events)


def _lags(arrivals: list[tuple[float, int]], updates: list[tuple[float, int]]) -> list[float]:
    lags = []
    for arrived, needed in arrivals:
        shown = next((at for at, visible in updates if at >= arrived and visible >= needed), None)
        if shown is not None:
            lags.append(shown - arrived)
    return lags


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def measure(name: str, key: str, text: str, *, piece: int, event_delay: float) -> tuple[Report, float]:
    async with FakeDiscord() as fake, ProviderReplayServer() as provider:
        provider.reply(openai_stream(text, piece=piece, event_delay=event_delay))
        client = discord.Client(intents=discord.Intents.default(), **fast_ready_kwargs())
        async with running_bot(fake, client):
            other = client.get_channel(int(fake.thought_channel_id))

            async def send() -> object:
                return await other.send("baseline", allowed_mentions=discord.AllowedMentions.none())

            baseline = statistics.median([(await time_await(send))[0].wall for _ in range(3)])
            channel = client.get_channel(int(fake.channel_id))
            adapter = create_adapter("openrouter", api_key="sk-bench", model="bench",  # chat completions
                                     base_url=f"{provider.url}/v1")
            arrivals: list[tuple[float, int]] = []
            delivery = MessageDelivery(DiscordMessageSink(channel, client=client))
            start = time.monotonic()
            chunks = _timed(normalized_stream(adapter, ChatRequest([Message("user", "go")])), arrivals)
            result = await run_stream(chunks, delivery)
            seconds = time.monotonic() - start
            await adapter.aclose()
        assert result.status == "completed", result.status
        updates = _updates(fake)
        lags = _lags(arrivals, updates)
        messages = fake.bot_messages(fake.channel_id)
        report = Report(
            name=name, key=key, chars=len(text), seconds=seconds, last_update=updates[-1][0] - start,
            first_message=messages[0].created_at - arrivals[0][0],
            lag_p50=_percentile(lags, 0.50), lag_p95=_percentile(lags, 0.95),
            updates=len(updates), messages=len(messages), rate_limited=len(fake.rate_limited),
        )
        return report, baseline


def record(figures: Figures, r: Report, baseline: float) -> None:
    """Every printed figure of one stream, and the ratios to the baseline round trip."""
    for name, value in (("chars", r.chars), ("return_s", r.seconds), ("shown_s", r.last_update),
                        ("updates", r.updates), ("messages", r.messages), ("rate_limited", r.rate_limited)):
        figures.add(f"{r.key}.{name}", value)
    figures.add(f"{r.key}.baseline_send_ms", baseline * 1000)
    for name, value in (("first_message", r.first_message), ("lag_p50", r.lag_p50), ("lag_p95", r.lag_p95)):
        figures.add(f"{r.key}.{name}_ms", value * 1000)
        figures.add(f"{r.key}.{name}_ratio_to_baseline", value / baseline)


async def main(slow_seconds: float) -> None:
    slow_events = max(10, int(slow_seconds / 0.1))
    slow_text = " ".join(f"tok{i:04d}" for i in range(slow_events))
    fast, fast_base = await measure("fast 6,000 chars", "fast", long_answer_with_code(), piece=30,
                                    event_delay=0.0)
    slow, slow_base = await measure(f"slow {slow_events} events x 0.1 s", "slow", slow_text,
                                    piece=max(1, len(slow_text) // slow_events), event_delay=0.1)
    print(f"{'stream':<26}{'chars':>7}{'return s':>9}{'shown s':>9}{'first msg ms':>14}{'lag p50 ms':>12}"
          f"{'lag p95 ms':>12}{'updates':>9}{'msgs':>6}{'429s':>6}")
    for r in (fast, slow):
        print(f"{r.name:<26}{r.chars:>7}{r.seconds:>9.2f}{r.last_update:>9.2f}{r.first_message * 1000:>14.1f}"
              f"{r.lag_p50 * 1000:>12.0f}{r.lag_p95 * 1000:>12.0f}{r.updates:>9}{r.messages:>6}"
              f"{r.rate_limited:>6}")
    figures = Figures("delivery")
    for r, base in ((fast, fast_base), (slow, slow_base)):
        record(figures, r, base)
        print(f"{r.name}: baseline send round trip {base * 1000:.1f} ms; first message = "
              f"{r.first_message / base:.1f}x baseline; edit lag p50 = {r.lag_p50 / base:.0f}x, "
              f"p95 = {r.lag_p95 / base:.0f}x baseline")
    print(f"figures merged into {figures.write()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow-seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(main(args.slow_seconds))
