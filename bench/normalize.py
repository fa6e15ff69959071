"""Per-chunk cost of normalization, measured against the floor in the same run.

    python bench/normalize.py [--chunks 20000] [--repeats 3]

A long stream is served by the local replay server (in 64 KiB writes); three readers consume it:
- floor: httpx reads the SSE body and `json.loads` each event (the least any reader pays);
- sdk:   the provider SDK's own typed iteration;
- ours:  `normalized_stream` over our adapter, guards on.
It prints µs per chunk (best wall time of the repeats) and the ratios. Target: ours <= 3x
floor on chat completions; on OpenAI's Responses API (the recorded streams of
tests/fixtures/openai_responses, their events repeated into one long response) ours <=
1.3x: its events are mostly JSON the floor parses too. Figures go to bench/results.json as
`normalize.<scenario>.<reader>.us_per_chunk` and `....ratio_to_floor`. Other streams plug
in as `Scenario`s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import openai  # noqa: E402
from harness import Figures, best_of_async, bulk_replay_server, key_part, target_line  # noqa: E402

from providers import ChatRequest, Message, ToolSpec, create_adapter, normalized_stream  # noqa: E402
from providers.endpoint_check import EndpointPolicy  # noqa: E402
from tests.support.fake_provider_server import ProviderReplayServer, Reply  # noqa: E402

# The body goes out in 64 KiB writes, as a network read delivers a fast stream.
BulkReplayServer = bulk_replay_server(64 * 1024)
TARGET_RATIO = 3.0
RESPONSES_TARGET_RATIO = 1.3


Reader = Callable[[ProviderReplayServer], Awaitable[int]]
"""Consumes the served stream once; returns how many events/chunks it saw (a sanity check)."""


@dataclass
class Scenario:
    name: str
    key: str  # its part of the results.json keys
    reply: Reply
    chunks: int
    readers: dict[str, Reader]  # "floor", "sdk", "ours" (and any extra rows)
    target: float = TARGET_RATIO  # ours / floor


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
        key="openai_text",
        reply=Reply(body=openai_body(chunks)),
        chunks=chunks,
        readers={
            "floor": openai_floor,
            "sdk": openai_sdk,
            # OpenAI itself speaks the Responses API (below); OpenRouter reads this format.
            "ours": ours_reader("openrouter"),
            "ours (custom + verbatim parser)": ours_reader(
                "custom", ChatRequest(messages=REQUEST.messages, tools=tools), verbatim_tool_calling=True,
                # The replay server listens on loopback, which a custom endpoint may not by default.
                endpoint_policy=EndpointPolicy(allow_private=True)),
        },
    ), Scenario(
        name="deepseek-style reasoning_content then text",
        key="deepseek_reasoning",
        reply=Reply(body=openai_body(chunks, reasoning=chunks // 2)),
        chunks=chunks,
        readers={"floor": openai_floor, "sdk": openai_sdk, "ours": ours_reader("deepseek")},
    )]


# ---- OpenAI's Responses API -------------------------------------------------------------------
RESPONSES_RECORDINGS = ("web_search_citations", "reasoning_summary_function_call",
                        "reasoning_multi_summary_encrypted", "text_two_phases", "text_after_tool_results")
RESPONSES_PAYLOAD = {"model": "gpt-5", "stream": True, "input": "story"}
_LIFECYCLE = ("response.created", "response.in_progress", "response.completed")


def responses_body(events: int) -> tuple[bytes, int]:
    """One long response from the recorded streams: `response.created`, then the events
    between each recording's lifecycle events (text, summaries, calls, searches, citations),
    repeated until there are `events` of them, then the last recording's
    `response.completed`. Returns the body and its event count."""
    from tests.support.data_openai_responses import recorded
    from tests.support.fake_provider_server import split_events

    middle: list[bytes] = []
    created = completed = b""
    for name in RESPONSES_RECORDINGS:
        for event in split_events(recorded(name)):
            kind = event.split(b"\n", 1)[0].removeprefix(b"event: ").decode()
            if kind == "response.created":
                created = created or event
            elif kind == "response.completed":
                completed = event
            elif kind not in _LIFECYCLE:
                middle.append(event)
    body = [created]
    while len(body) - 1 < events:
        body.extend(middle[: events - (len(body) - 1)])
    body.append(completed)
    return b"".join(body), len(body)


async def responses_floor(server: ProviderReplayServer) -> int:
    return await floor_sse(f"{server.url}/v1/responses", RESPONSES_PAYLOAD, {"Authorization": "Bearer sk-bench"})


async def responses_sdk(server: ProviderReplayServer) -> int:
    client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="sk-bench", max_retries=0)
    seen = 0
    try:
        stream = await client.responses.create(model="gpt-5", input="story", stream=True)
        async for _event in stream:
            seen += 1
    finally:
        await client.close()
    return seen


def responses_scenarios(chunks: int) -> list[Scenario]:
    body, events = responses_body(chunks)
    return [Scenario(
        name="openai responses (recorded streams, repeated)",
        key="openai_responses",
        reply=Reply(body=body),
        chunks=events,
        readers={"floor": responses_floor, "sdk": responses_sdk, "ours": ours_reader("openai")},
        target=RESPONSES_TARGET_RATIO,
    )]


# ---- running and reporting -------------------------------------------------------------------
async def run_scenarios(scenarios: list[Scenario], repeats: int) -> list[dict]:
    """Each scenario's readers against one server; µs per chunk is the best wall time."""
    rows = []
    for scenario in scenarios:
        async with BulkReplayServer() as server:
            server.reply(scenario.reply)
            await scenario.readers["floor"](server)  # warm up imports and sockets
            timings = {}
            for label, reader in scenario.readers.items():
                timing, seen = await best_of_async(lambda r=reader: r(server), repeats)
                timings[label] = (timing.wall * 1e6 / scenario.chunks, seen)
        rows.append({"scenario": scenario, "timings": timings})
    return rows


def print_report(rows: list[dict], figures: Figures) -> None:
    for row in rows:
        scenario, timings = row["scenario"], row["timings"]
        floor = timings["floor"][0]
        print(f"\n{scenario.name} — {scenario.chunks} chunks (best of runs, µs per chunk)")
        for label, (us, seen) in timings.items():
            key = f"{scenario.key}.{key_part(label)}"
            figures.add(f"{key}.us_per_chunk", us)
            ratio = 1.0 if label == "floor" else figures.add_ratio(key, us, floor)
            print(f"  {label:<34} {us:8.2f} µs   {ratio:6.2f}x floor   ({seen} items)")
        if "sdk" in timings and "ours" in timings:
            ours, sdk = timings["ours"][0], timings["sdk"][0]
            sdk_to_ours = figures.add(f"{scenario.key}.sdk_to_ours", sdk / ours)
            print(f"  {target_line('ours/floor', ours / floor, scenario.target)}; sdk/ours = {sdk_to_ours:.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    scenarios = openai_scenarios(args.chunks) + responses_scenarios(args.chunks)
    rows = asyncio.run(run_scenarios(scenarios, args.repeats))
    figures = Figures("normalize")
    print_report(rows, figures)
    print(f"\nfigures merged into {figures.write()}")


if __name__ == "__main__":
    main()
