"""Per-chunk cost of the Anthropic and Gemini adapters against the floor and the SDKs.

Run from the repository root: `python bench/normalize_native.py`. For each provider a
20,000-chunk stream is served by tests/support/fake_provider_server.py in a child process (so
the server's own work is not charged to the client), and the same run measures (the server writes the body in 16 KiB pieces; `--per-event`
writes one event at a time instead):

- floor: httpx reading the SSE body, splitting events, `json.loads` per event;
- sdk:   the SDK's own typed iteration (anthropic `messages.create(stream=True)`,
         google-genai `aio.models.generate_content_stream`);
- sdk-dicts (Gemini only): google-genai's `api_client.async_request_streamed`, the
         SDK's untyped layer, which still loads and re-dumps every payload;
- ours:  `normalized_stream` over our adapter (SDK-built request, raw body, jiter).

The figure is the client process's CPU time per chunk (best of several runs), with wall
time beside it. The target is ours <= 3x the floor. The script only reports; figures go to
bench/results.json as `normalize_native.<provider>.<mode>.cpu_us_per_chunk` (and
`wall_us_per_chunk`, `ratio_to_floor`), the provider suffixed `_per_event` with `--per-event`.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import Figures, Timing, best_of, bulk_replay_server, target_line  # noqa: E402

CHUNKS = 20_000
RUNS = 3
TARGET_RATIO = 3.0
_WORDS = "the model wrote a short answer about rivers mountains and 3.14 while thinking".split()


def _piece(rng: random.Random) -> str:
    return " " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 4)))


def anthropic_body(chunks: int = CHUNKS) -> bytes:
    """message_start, a thinking block, a text block; `chunks` delta events in all."""
    rng = random.Random(1)
    thinking = chunks // 10
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
    for _ in range(thinking - 1):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "thinking_delta", "thinking": _piece(rng)}}))
    events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("content_block_start", {"type": "content_block_start", "index": 1,
                                           "content_block": {"type": "text", "text": ""}}))
    for _ in range(chunks - thinking):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 1,
                                               "delta": {"type": "text_delta", "text": _piece(rng)}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                     "stop_sequence": None}, "usage": {"output_tokens": chunks}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in events).encode()


def gemini_body(chunks: int = CHUNKS) -> bytes:
    """`chunks` payloads as Gemini sends them: one part each, usage on every payload."""
    rng = random.Random(2)
    out = []
    for i in range(chunks):
        thought = i < chunks // 10
        part: dict = {"text": _piece(rng), "thought": True} if thought else {"text": _piece(rng)}
        candidate: dict = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if i == chunks - 1:
            candidate["finishReason"] = "STOP"
        out.append({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 10,
                    "candidatesTokenCount": i, "totalTokenCount": 10 + i}, "modelVersion": "gemini-bench"})
    return "".join(f"data: {json.dumps(p)}\r\n\r\n" for p in out).encode()


# ---- the server, in a child process ---------------------------------------------------------
def serve(provider: str, piece: int) -> None:
    """The replay server, writing the body in `piece`-byte writes (0: one write per event)."""
    from tests.support.fake_provider_server import Reply

    server_class = bulk_replay_server(piece)
    body = anthropic_body() if provider == "anthropic" else gemini_body()

    async def main() -> None:
        async with server_class() as server:
            server.reply(Reply(body=body))
            print(server.url, flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(main())


# ---- the clients ----------------------------------------------------------------------------
def _split(buffer: bytes) -> tuple[list[bytes], bytes]:
    buffer = buffer.replace(b"\r\n", b"\n")
    cut = buffer.rfind(b"\n\n")
    if cut < 0:
        return [], buffer
    return buffer[:cut].split(b"\n\n"), buffer[cut + 2:]


async def floor(url: str, path: str, payload: dict) -> int:
    import httpx

    count = 0
    async with httpx.AsyncClient(timeout=60) as client:
        async with client.stream("POST", url + path, json=payload) as response:
            rest = b""
            async for piece in response.aiter_bytes():
                events, rest = _split(rest + piece)
                for event in events:
                    for line in event.split(b"\n"):
                        if line.startswith(b"data:"):
                            json.loads(line[5:])
                            count += 1
    return count


async def anthropic_sdk(url: str) -> int:
    import anthropic

    count = 0
    async with anthropic.AsyncAnthropic(base_url=url, api_key="sk-ant-bench", max_retries=0) as client:
        stream = await client.messages.create(model="claude-bench", max_tokens=10, stream=True,
                                              messages=[{"role": "user", "content": "hi"}])
        async for event in stream:
            count += event.type is not None
    return count


async def gemini_sdk(url: str) -> int:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="AIza-bench", http_options=types.HttpOptions(
        base_url=url, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1)))
    count = 0
    async for response in await client.aio.models.generate_content_stream(model="gemini-bench", contents="hi"):
        count += response.candidates is not None
    await client.aio.aclose()
    return count


async def gemini_sdk_dicts(url: str) -> int:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="AIza-bench", http_options=types.HttpOptions(
        base_url=url, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1)))
    count = 0
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    api = client.aio._api_client
    async for response in await api.async_request_streamed(
        "post", "models/gemini-bench:streamGenerateContent?alt=sse", body
    ):
        count += bool(json.loads(response.body))
    await client.aio.aclose()
    return count


async def ours(url: str, provider: str) -> int:
    from providers.adapter import create_adapter, normalized_stream
    from providers.types import ChatRequest, Message

    adapter = create_adapter(provider, api_key="bench-key", model=f"{provider}-bench", base_url=url, timeout=60)
    count = 0
    async for chunk in normalized_stream(adapter, ChatRequest(messages=[Message("user", "hi")])):
        count += chunk.type != "error"
        if chunk.type == "error":
            raise RuntimeError(f"bench stream failed: {chunk.error}")
    await adapter.aclose()  # type: ignore[attr-defined]
    return count


def measure(run: Callable[[], Awaitable[int]]) -> Timing:
    """Best CPU and wall seconds over RUNS, after one warm-up."""
    return best_of(lambda: asyncio.run(run()), RUNS, warmup=True)


def modes_for(provider: str, url: str) -> dict[str, Callable[[], Awaitable[int]]]:
    """The readers measured for `provider` against the server at `url`."""
    if provider == "anthropic":
        path, payload = "/v1/messages", {"model": "claude-bench", "max_tokens": 10, "stream": True,
                                         "messages": [{"role": "user", "content": "hi"}]}
        return {"floor": lambda: floor(url, path, payload), "sdk": lambda: anthropic_sdk(url),
                "ours": lambda: ours(url, "anthropic")}
    path = "/v1beta/models/gemini-bench:streamGenerateContent?alt=sse"
    payload = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return {"floor": lambda: floor(url, path, payload), "sdk": lambda: gemini_sdk(url),
            "sdk-dicts": lambda: gemini_sdk_dicts(url), "ours": lambda: ours(url, "google")}


def bench(provider: str, piece: int, figures: Figures) -> None:
    child = subprocess.Popen([sys.executable, __file__, "--serve", provider, str(piece)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        results = {name: measure(run) for name, run in modes_for(provider, url).items()}
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=10)
    report(provider, piece, results, figures)


def report(provider: str, piece: int, results: dict[str, Timing], figures: Figures) -> None:
    base_cpu = results["floor"].cpu
    writes = f"{piece // 1024} KiB server writes" if piece else "one server write per event"
    prefix = provider if piece else f"{provider}_per_event"
    print(f"\n{provider}: {CHUNKS:,} chunks, {writes} (client CPU us/chunk, best of {RUNS}; wall beside)")
    for name, timing in results.items():
        key = f"{prefix}.{name.replace('-', '_')}"
        cpu = figures.add(f"{key}.cpu_us_per_chunk", timing.cpu / CHUNKS * 1e6)
        wall = figures.add(f"{key}.wall_us_per_chunk", timing.wall / CHUNKS * 1e6)
        ratio = 1.0 if name == "floor" else figures.add_ratio(key, timing.cpu, base_cpu)
        print(f"  {name:<10} {cpu:8.2f} us  (wall {wall:7.2f} us)  x{ratio:5.2f} floor")
    sdk_to_ours = figures.add(f"{prefix}.sdk_to_ours", results["sdk"].cpu / results["ours"].cpu)
    ratio = results["ours"].cpu / base_cpu
    print(f"  {target_line('ours/floor', ratio, TARGET_RATIO)}; sdk/ours = {sdk_to_ours:.1f}x")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        # Default: 16 KiB writes, so a read carries many events and the figure is the
        # per-chunk path. `--per-event`: one write per event (each read one event, as
        # a slow live stream delivers them), which adds the per-read cost to every mode.
        size = 0 if "--per-event" in sys.argv else 16 * 1024
        native_figures = Figures("normalize_native")
        for name in ("anthropic", "google"):
            bench(name, size, native_figures)
        print(f"\nfigures merged into {native_figures.write()}")
