"""What every bench shares: repeated timing, ratios to a floor, and bench/results.json.

This machine is shared, so an absolute time drifts from run to run; a figure means
something only next to a floor measured in the same run, and every bench reports ratios.
The raw times are kept beside them. Figures are merged by key into bench/results.json,
so one bench run updates its own keys and leaves the other benches' figures alone.

This module is imported by the benches, never run: the Makefile's `bench` target skips it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

RESULTS = Path(__file__).with_name("results.json")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Timing:
    """One measurement: CPU seconds of this process and wall seconds."""

    cpu: float
    wall: float


def best(timings: Iterable[Timing]) -> Timing:
    """The smallest CPU and the smallest wall time, each on its own: noise only ever adds."""
    timings = list(timings)
    return Timing(min(t.cpu for t in timings), min(t.wall for t in timings))


def time_call(fn: Callable[..., Any], *args: Any) -> Timing:
    """Time one call of `fn(*args)`."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn(*args)
    return Timing(time.process_time() - cpu, time.perf_counter() - wall)


async def time_await(fn: Callable[[], Awaitable[T]]) -> tuple[Timing, T]:
    """Time one awaited call of `fn()`; returns the timing and what it returned."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = await fn()
    return Timing(time.process_time() - cpu, time.perf_counter() - wall), result


def best_of(fn: Callable[[], Any], repeats: int, *, warmup: bool = False) -> Timing:
    """The best of `repeats` calls (after one untimed call with `warmup`)."""
    if warmup:
        fn()
    return best(time_call(fn) for _ in range(repeats))


async def best_of_async(fn: Callable[[], Awaitable[T]], repeats: int) -> tuple[Timing, T]:
    """The best of `repeats` awaited calls, and what the last one returned."""
    timings, result = [], None
    for _ in range(repeats):
        timing, result = await time_await(fn)
        timings.append(timing)
    return best(timings), result  # type: ignore[return-value]


def verdict(ratio: float, target: float) -> str:
    """How a ratio compares with its target, as the reports print it."""
    return "meets" if ratio <= target else "MISSES"


def target_line(name: str, ratio: float, target: float) -> str:
    """E.g. `ours/floor = 1.70 (meets the <= 3x target)`."""
    return f"{name} = {ratio:.2f} ({verdict(ratio, target)} the <= {target:g}x target)"


def key_part(label: str) -> str:
    """A label as a results.json key part: 'openai-compatible text' -> 'openai_compatible_text'."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


class Figures:
    """The figures of one bench run, keyed `<bench>.<what>.<unit>`, merged into results.json."""

    def __init__(self, bench: str) -> None:
        self.bench = bench
        self.values: dict[str, float] = {}

    def add(self, key: str, value: float) -> float:
        """Record `value` under `<bench>.<key>` and return it (so a report can print it)."""
        self.values[f"{self.bench}.{key}"] = value if isinstance(value, int) else round(value, 4)
        return value

    def add_ratio(self, key: str, value: float, floor: float) -> float:
        """Record and return `value / floor` under `<bench>.<key>.ratio_to_floor`."""
        return self.add(f"{key}.ratio_to_floor", value / floor)

    def write(self, path: Path = RESULTS) -> Path:
        """Merge this run's figures into `path`: this bench's keys replaced, others kept."""
        merged: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}
        merged.update(self.values)
        path.write_text(json.dumps(dict(sorted(merged.items())), indent=2) + "\n")
        return path


def bulk_replay_server(piece: int) -> type:
    """The replay server class writing each body in `piece`-byte writes (0: one per event).

    One write per event would cost the server tens of µs per event and, on a shared event
    loop, hide every reader's own cost behind it; big writes are what a network read of a
    fast stream delivers anyway.
    """
    from tests.support.fake_provider_server import ProviderReplayServer

    class BulkReplayServer(ProviderReplayServer):
        async def _write_body(self, request, response, reply):  # type: ignore[no-untyped-def]
            if not piece:
                return await super()._write_body(request, response, reply)
            for start in range(0, len(reply.body), piece):
                await response.write(reply.body[start : start + piece])
            await response.write_eof()

    return BulkReplayServer
