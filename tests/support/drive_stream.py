"""Driving scripted chunk streams through the real delivery on a virtual clock.

The `scripted_*` builders make the normalized chunks an adapter would yield (named apart
from the product's own `done_chunk`); `drive` runs them through `run_stream` and a
`MessageDelivery` into a `MemorySink`."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable

from providers.types import FinishReason, FunctionCall, ProcessedChunk, ProviderError, Usage
from stream.buffer import MessageDelivery
from stream.orchestrator import StreamResult, run_stream
from tests.support.fake_clock import VirtualClock
from tests.support.fake_message_sink import MemorySink

FENCE_LINE = re.compile(r"^[ \t]*```", re.MULTILINE)


def scripted_text(content: str) -> ProcessedChunk:
    return ProcessedChunk(type="text", content=content)


def scripted_done(usage: Usage | None = None, reason: FinishReason = "stop") -> ProcessedChunk:
    return ProcessedChunk(type="done", finish_reason=reason, usage=usage)


def scripted_call(name: str, **args: object) -> ProcessedChunk:
    return ProcessedChunk(type="function_call", function_call=FunctionCall(name=name, args=dict(args)))


def scripted_error(kind: str = "provider_overloaded", code: str = "overloaded") -> ProcessedChunk:
    return ProcessedChunk(
        type="error",
        error=ProviderError(type=kind, message="upstream failed", retryable=True, code=code),  # type: ignore[arg-type]
    )


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class Script:
    """A chunk stream with a fixed gap between chunks; records whether it was closed."""

    def __init__(self, clock: VirtualClock, chunks: Iterable[ProcessedChunk], gap: float = 0.0):
        self.clock = clock
        self.chunks = list(chunks)
        self.gap = gap
        self.yielded = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[ProcessedChunk]:
        try:
            for chunk in self.chunks:
                if self.gap:
                    await self.clock.sleep(self.gap)
                self.yielded += 1
                yield chunk
        finally:
            self.closed = True


async def stream_into(
    chunks: Iterable[ProcessedChunk],
    clock: VirtualClock,
    sink: MemorySink,
    *,
    gap: float = 0.0,
    delivery_args: dict | None = None,
    **run_args: object,
) -> tuple[StreamResult, MemorySink, MessageDelivery, Script]:
    """One stream through a fresh delivery; call inside `clock.run`."""
    delivery = MessageDelivery(sink, clock=clock, **(delivery_args or {}))
    script = Script(clock, chunks, gap)
    result = await run_stream(script.__aiter__(), delivery, **run_args)
    return result, sink, delivery, script


async def drive(
    chunks: Iterable[ProcessedChunk],
    *,
    gap: float = 0.0,
    clock: VirtualClock | None = None,
    sink: MemorySink | None = None,
    delivery_args: dict | None = None,
    **run_args: object,
) -> tuple[StreamResult, MemorySink, MessageDelivery, Script]:
    """Run one stream on a virtual clock (a fresh one unless given)."""
    clock = clock or VirtualClock()
    sink = sink or MemorySink(clock, latency=0.05)
    return await clock.run(
        stream_into(chunks, clock, sink, gap=gap, delivery_args=delivery_args, **run_args)
    )


def squash(text: str) -> str:
    """Without fence lines and whitespace: what splitting must preserve."""
    kept = [line for line in text.split("\n") if not FENCE_LINE.match(line)]
    return re.sub(r"\s+", "", "\n".join(kept))
