"""The routing loop of one stream: chunks in, delivery fed, outcome collected.

State lives on the `ChunkConsumer` object, so what was collected survives when the loop
is cut short from outside (an interrupt while the provider is silent).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, AsyncIterator

from providers.errors import internal_failure
from providers.types import (
    FinishReason,
    FunctionCall,
    ProcessedChunk,
    ProviderError,
    Source,
    ThoughtLogEntry,
    Usage,
)
from stream.buffer import MessageDelivery
from stream.interrupt import Interrupt, InterruptReason
from stream.limits import StreamLimits, content_timeout

log = logging.getLogger(__name__)


class ThoughtRuns:
    """Per-chunk thought entries merged into runs of the same kind and provider.

    At most `limit` characters are kept: past it the oldest runs are trimmed from the
    front (the end of the reasoning is what explains the answer) and `cut` is set.
    """

    __slots__ = ("_runs", "_size", "_limit", "cut")

    def __init__(self, limit: int) -> None:
        self._runs: list[tuple[str, str, list[str]]] = []
        self._size = 0
        self._limit = limit
        self.cut = False

    def add(self, entries: list[ThoughtLogEntry]) -> None:
        for entry in entries:
            last = self._runs[-1] if self._runs else None
            mergeable = entry.kind in ("raw", "summary")
            if last is not None and mergeable and last[0] == entry.kind and last[1] == entry.provider:
                last[2].append(entry.text)
            else:
                self._runs.append((entry.kind, entry.provider, [entry.text]))
            self._size += len(entry.text)
        if self._size > 2 * self._limit:  # trimmed in batches: amortized linear
            self._trim()

    def _trim(self) -> None:
        excess = self._size - self._limit
        while excess > 0 and self._runs:
            kind, provider, parts = self._runs[0]
            text = "".join(parts)
            if len(text) <= excess:
                self._runs.pop(0)
                excess -= len(text)
                self._size -= len(text)
                continue
            self._runs[0] = (kind, provider, [text[excess:]])
            self._size -= excess
            excess = 0
        self.cut = True

    @property
    def empty(self) -> bool:
        """No thoughts were seen (cheap: nothing is joined)."""
        return not self._runs

    def entries(self) -> list[ThoughtLogEntry]:
        if self._size > self._limit:
            self._trim()
        return [
            ThoughtLogEntry(kind, "".join(parts), provider)  # type: ignore[arg-type]
            for kind, provider, parts in self._runs
        ]


class ChunkConsumer:
    """Routes chunks into the delivery and records everything the result needs."""

    def __init__(self, delivery: MessageDelivery, limits: StreamLimits, provider: str | None = None) -> None:
        self.delivery = delivery
        self.limits = limits
        self.provider = provider  # named by the errors made here (a timeout, a stream bug)
        self.thoughts = ThoughtRuns(limits.max_thought_chars)
        self.calls: list[FunctionCall] = []
        self.calls_dropped = 0
        self.clock = delivery.clock
        self.started_at = self.clock.now()
        self.last_content_at: float | None = None
        self.first_content_at: float | None = None  # text, a call or reasoning: anything but an error
        self.error: ProviderError | None = None
        self.usage: Usage | None = None
        self.finish_reason: FinishReason | None = None
        self.serving: str | None = None
        self.sources: list[Source] = []  # web pages a native search grounded the response on
        self.searches: list[str] = []  # the queries it searched for
        self.interrupted: InterruptReason | None = None
        self.count = 0

    async def run(self, chunks: AsyncIterable[ProcessedChunk], interrupt: Interrupt | None) -> None:
        """Consume until the stream ends, errors, `interrupt` fires or a deadline passes —
        even while the provider sends nothing (a reasoning model thinking silently)."""
        work = asyncio.ensure_future(self.consume(chunks, interrupt))
        watchers = [asyncio.ensure_future(self._watch_deadlines())]
        if interrupt is not None:
            watchers.append(asyncio.ensure_future(interrupt.wait()))
        try:
            await asyncio.wait({work, *watchers}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for watcher in watchers:
                watcher.cancel()
            if not work.done():
                work.cancel()
                await asyncio.wait({work})
        if self.error is None and self.interrupted is None and interrupt is not None and interrupt.is_set():
            self.interrupted = interrupt.reason

    async def _watch_deadlines(self) -> None:
        """One timer per stream (nothing per chunk but a clock reading): sleeps until the
        nearest deadline, re-arms while content keeps coming, then ends the stream."""
        clock, limits, start = self.clock, self.limits, self.started_at
        while True:
            last = self.last_content_at
            idle = (start + limits.first_content_seconds) if last is None else (last + limits.idle_seconds)
            total = start + limits.total_seconds
            delay = min(idle, total) - clock.now()
            if delay > 0:
                await clock.sleep(delay)
                continue
            if self.error is not None or self.interrupted is not None:
                return
            if clock.now() >= total:
                self.interrupted = "deadline"
            else:
                seconds = limits.first_content_seconds if last is None else limits.idle_seconds
                self.error = content_timeout(last is None, seconds, self.provider)
            return

    async def consume(self, chunks: AsyncIterable[ProcessedChunk], interrupt: Interrupt | None) -> None:
        """Read until the stream ends, errors or is interrupted; never raises but for
        cancellation. The chunk iterator is always closed."""
        iterator: AsyncIterator[ProcessedChunk] | None = None
        try:
            iterator = aiter(chunks)
            while self.error is None and self.interrupted is None:
                if interrupt is not None and interrupt.is_set():
                    self.interrupted = interrupt.reason
                    return
                if self.delivery.overflowed:  # the answer reached its message limit
                    return
                try:
                    chunk = await anext(iterator)
                except StopAsyncIteration:
                    return
                self.route(chunk)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the contract: a bug becomes a result
            log.exception("stream iteration failed")
            self.error = internal_failure(provider=self.provider, message="the stream failed unexpectedly",
                                          code="stream_internal")
        finally:
            if iterator is not None:
                await _close(iterator)

    def route(self, chunk: ProcessedChunk) -> None:
        """One chunk: text to the delivery, calls collected, error kept, the rest read."""
        self.count += 1
        kind = chunk.type
        if kind == "text":
            if chunk.content:
                self.last_content_at = self._shown()
                self.delivery.append(chunk.content)
        elif kind == "function_call":
            if chunk.function_call is not None:
                self.last_content_at = self._shown()
                self._keep_call(chunk.function_call)
        elif kind == "error":
            self.error = chunk.error or internal_failure(
                provider=self.provider, message="error chunk without details", code="unknown")
        if chunk.thoughts:
            self._shown()
            self.thoughts.add(chunk.thoughts)
        if chunk.serving_provider and self.serving is None:
            self.serving = chunk.serving_provider.strip() or None
        if chunk.usage is not None:
            self.usage = chunk.usage
        if chunk.finish_reason is not None:
            self.finish_reason = chunk.finish_reason
        if chunk.sources:
            self.sources.extend(chunk.sources)
        if chunk.searches:
            self.searches.extend(chunk.searches)

    def _shown(self) -> float:
        """Now; the first time, also when the response first showed something."""
        now = self.clock.now()
        if self.first_content_at is None:
            self.first_content_at = now
        return now

    def _keep_call(self, call: FunctionCall) -> None:
        if len(self.calls) < self.limits.max_calls:
            self.calls.append(call)
            return
        self.calls_dropped += 1
        if self.calls_dropped == 1:
            log.warning("a response made more than %d tool calls; the rest are dropped", self.limits.max_calls)


async def _close(iterator: AsyncIterator[ProcessedChunk]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is None:
        return
    try:
        await closer()
    except Exception:  # noqa: BLE001 - closing a finished stream is best effort
        log.debug("closing the chunk iterator failed", exc_info=True)
