"""Per-chunk cost of normalization, measured against the floor in the same run.

    python bench/normalize.py [--chunks 20000] [--repeats 3]

A long stream is served by the local replay server (in 64 KiB writes); three readers consume it:
- floor: httpx reads the SSE body and `json.loads` each event (the least any reader pays);
- sdk:   the provider SDK's own typed iteration;
- ours:  `normalized_stream` over our adapter, guards on.
It prints µs per chunk and the ratios. Target: ours <= 3x floor.

Other streams plug in as `Scenario`s (bench/normalize_native.py adds Anthropic and
Gemini with the same harness: `Scenario`, `floor_sse`, `run_scenarios`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import openai  # noqa: E402

from providers import ChatRequest, Message, ToolSpec, create_adapter, normalized_stream  # noqa: E402
from tests.fakes.provider_server import ProviderReplayServer, Reply  # noqa: E402

PIECE = 64 * 1024


class BulkReplayServer(ProviderReplayServer):
    """The replay server writing the body in 64 KiB pieces, as a network read delivers it.

    Writing 20,000 events one by one would cost the server ~50 µs per event on this same
    event loop and hide every reader's own cost behind it.
    """

    async def _write_body(self, request, response, reply: Reply) -> None:  # type: ignore[override]
        for start in range(0, len(reply.body), PIECE):
            await response.write(reply.body[start : start + PIECE])
        await response.write_eof()


Reader = Callable[[ProviderReplayServer], Awaitable[int]]
"""Consumes the served stream once; returns how many events/chunks it saw (a sanity check)."""


@dataclass
class Scenario:
    name: str
    reply: Reply
    chunks: int
    readers: dict[str, Reader]  # "floor", "sdk", "ours" (and any extra rows)


async def floor_sse(url: str, payload: dict, headers: dict[str, str] | None = None) -> int:
    """The floor: httpx streams the body, each `data:` event goes through json.loads."""
    seen = 0
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("POST", url, json=payload, headers=headers or {}) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
                    seen += 1
    return seen


# ---- the OpenAI-compatible stream -------------------------------------------------------------
WORDS = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".", "\n",
         " Numbers", " like", " 3.14", " and", " `code`", " stay", " intact", ";", " ok"]


def openai_body(chunks: int, *, reasoning: int = 0) -> bytes:
    """A realistic chat.completion.chunk stream: role, `reasoning` reasoning_content deltas,
    then content deltas (`chunks` deltas in all), finish, usage."""
    def event(delta: dict | None, finish: str | None = None, usage: dict | None = None) -> str:
        body = {"id": "chatcmpl-bench0123456789", "object": "chat.completion.chunk", "created": 1764633600,
                "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_0123456789",
                "choices": [] if delta is None else
                [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if usage is not None:
            body["usage"] = usage
        return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"

    parts = [event({"role": "assistant", "content": "", "refusal": None})]
    parts.extend(event({"content": None, "reasoning_content": WORDS[i % len(WORDS)]})
                 for i in range(reasoning))
    parts.extend(event({"content": WORDS[i % len(WORDS)], "reasoning_content": None})
                 for i in range(chunks - reasoning))
    parts.append(event({}, "stop"))
    parts.append(event(None, usage={"prompt_tokens": 12, "completion_tokens": chunks,
                                    "total_tokens": chunks + 12}))
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


REQUEST = ChatRequest(messages=[Message("user", "Tell me a long story.")])
PAYLOAD = {"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": "story"}]}


async def openai_floor(server: ProviderReplayServer) -> int:
    return await floor_sse(f"{server.url}/v1/chat/completions", PAYLOAD, {"Authorization": "Bearer sk-bench"})


async def openai_sdk(server: ProviderReplayServer) -> int:
    client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="sk-bench", max_retries=0)
    seen = 0
    try:
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "story"}], stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content is not None:
                seen += 1
    finally:
        await client.close()
    return seen


def ours_reader(provider: str, request: ChatRequest = REQUEST, **options) -> Reader:
    async def read(server: ProviderReplayServer) -> int:
        adapter = create_adapter(provider, api_key="sk-bench", model="gpt-4o-mini",
                                 base_url=f"{server.url}/v1", timeout=30.0, **options)
        seen = 0
        try:
            async for chunk in normalized_stream(adapter, request):
                if chunk.type == "error":
                    raise RuntimeError(f"benchmark stream failed: {chunk.error}")
                seen += 1
        finally:
            await adapter.aclose()
        return seen
    return read


def openai_scenarios(chunks: int) -> list[Scenario]:
    tools = (ToolSpec("get_time", "Current time", {"type": "object", "properties": {}}),)
    return [Scenario(
        name="openai-compatible text",
        reply=Reply(body=openai_body(chunks)),
        chunks=chunks,
        readers={
            "floor": openai_floor,
            "sdk": openai_sdk,
            "ours": ours_reader("openai"),
            "ours (custom + verbatim parser)": ours_reader(
                "custom", ChatRequest(messages=REQUEST.messages, tools=tools), verbatim_tool_calling=True),
        },
    ), Scenario(
        name="deepseek-style reasoning_content then text",
        reply=Reply(body=openai_body(chunks, reasoning=chunks // 2)),
        chunks=chunks,
        readers={"floor": openai_floor, "sdk": openai_sdk, "ours": ours_reader("deepseek")},
    )]


# ---- harness ----------------------------------------------------------------------------------
async def best_of(reader: Reader, server: ProviderReplayServer, repeats: int) -> tuple[float, int]:
    best, seen = float("inf"), 0
    for _ in range(repeats):
        start = time.perf_counter()
        seen = await reader(server)
        best = min(best, time.perf_counter() - start)
    return best, seen


async def run_scenarios(scenarios: list[Scenario], repeats: int) -> list[dict]:
    rows = []
    for scenario in scenarios:
        async with BulkReplayServer() as server:
            server.reply(scenario.reply)
            await best_of(scenario.readers["floor"], server, 1)  # warm up imports and sockets
            timings = {}
            for label, reader in scenario.readers.items():
                seconds, seen = await best_of(reader, server, repeats)
                timings[label] = (seconds * 1e6 / scenario.chunks, seen)
        rows.append({"scenario": scenario.name, "chunks": scenario.chunks, "timings": timings})
    return rows


def print_report(rows: list[dict]) -> None:
    for row in rows:
        timings = row["timings"]
        floor = timings["floor"][0]
        print(f"\n{row['scenario']} — {row['chunks']} chunks (best of runs, µs per chunk)")
        for label, (us, seen) in timings.items():
            print(f"  {label:<34} {us:8.2f} µs   {us / floor:6.2f}x floor   ({seen} items)")
        if "sdk" in timings and "ours" in timings:
            ours, sdk = timings["ours"][0], timings["sdk"][0]
            verdict = "OK" if ours <= 3 * floor else "OVER TARGET"
            print(f"  ours/floor = {ours / floor:.2f} (target <= 3.00: {verdict}); "
                  f"sdk/ours = {sdk / ours:.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rows = asyncio.run(run_scenarios(openai_scenarios(args.chunks), args.repeats))
    print_report(rows)


if __name__ == "__main__":
    main()
