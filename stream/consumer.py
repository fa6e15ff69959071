"""The routing loop of one stream: chunks in, delivery fed, outcome collected.

State lives on the `ChunkConsumer` object, so what was collected survives when the loop
is cut short from outside (a stop request while the provider is silent).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Literal

from providers.types import FunctionCall, ProcessedChunk, ProviderError, ThoughtLogEntry
from stream.buffer import MessageDelivery
from stream.clock import Clock, MonotonicClock
from stream.usage import Usage, merge_usage, normalize_usage

log = logging.getLogger(__name__)

Interrupt = Literal["stopped_by_user", "follow_up_interrupt"]


class ThoughtRuns:
    """Per-chunk thought entries merged into runs of the same kind and provider."""

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        self._runs: list[tuple[str, str, list[str]]] = []

    def add(self, entries: list[ThoughtLogEntry]) -> None:
        for entry in entries:
            last = self._runs[-1] if self._runs else None
            mergeable = entry.kind in ("raw", "summary")
            if last is not None and mergeable and last[0] == entry.kind and last[1] == entry.provider:
                last[2].append(entry.text)
            else:
                self._runs.append((entry.kind, entry.provider, [entry.text]))

    def entries(self) -> list[ThoughtLogEntry]:
        return [
            ThoughtLogEntry(kind, "".join(parts), provider)  # type: ignore[arg-type]
            for kind, provider, parts in self._runs
        ]


class _IdleTimeout(Exception):
    """No chunk arrived within the idle timeout."""


class ChunkConsumer:
    """Routes chunks (spec §6) and records everything the result needs."""

    def __init__(
        self,
        delivery: MessageDelivery,
        *,
        should_stop: Callable[[], bool] | None = None,
        follow_up: Callable[[], bool] | None = None,
        on_progress: Callable[[], object] | None = None,
        idle_timeout: float | None = None,
        clock: Clock | None = None,
        provider: str | None = None,
    ) -> None:
        self.delivery = delivery
        self.should_stop = should_stop
        self.follow_up = follow_up
        self.on_progress = on_progress
        self.idle_timeout = idle_timeout
        self.clock = clock
        self.provider = provider
        self.thoughts = ThoughtRuns()
        self.calls: list[FunctionCall] = []
        self.error: ProviderError | None = None
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.serving: str | None = None
        self.interrupt: Interrupt | None = None
        self.count = 0

    async def consume(self, chunks: AsyncIterable[ProcessedChunk]) -> None:
        """Read until the stream ends, errors or is interrupted; never raises but for
        cancellation. The chunk iterator is always closed."""
        iterator: AsyncIterator[ProcessedChunk] | None = None
        try:
            iterator = aiter(chunks)
            while self.error is None:
                if _poll(self.should_stop, "should_stop"):
                    self.interrupt = "stopped_by_user"
                    return
                if _poll(self.follow_up, "follow_up"):
                    self.interrupt = "follow_up_interrupt"
                    return
                try:
                    chunk = await _next(iterator, self.idle_timeout, self.clock)
                except StopAsyncIteration:
                    return
                except _IdleTimeout:
                    self.error = ProviderError(
                        type="timeout",
                        message=f"no data from the provider for {self.idle_timeout:g} seconds",
                        retryable=True,
                        code="stream_idle_timeout",
                        provider=self.provider,
                    )
                    return
                self.route(chunk)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the contract: a bug becomes a result
            log.exception("stream iteration failed")
            self.error = ProviderError(
                type="api_error", message="the stream failed unexpectedly",
                retryable=False, code="stream_internal", provider=self.provider,
            )
        finally:
            if iterator is not None:
                await _close(iterator)

    def route(self, chunk: ProcessedChunk) -> None:
        """One chunk: text to the delivery, calls collected, error kept, metadata read."""
        self.count += 1
        if self.on_progress is not None:
            try:
                self.on_progress()
            except Exception:  # noqa: BLE001 - a watchdog bug must not end the answer
                log.exception("on_progress callback failed")
        kind = chunk.type
        if kind == "text":
            if chunk.content:
                self.delivery.append(chunk.content)
        elif kind == "function_call":
            if chunk.function_call is not None:
                self.calls.append(chunk.function_call)
        elif kind == "error":
            self.error = chunk.error or ProviderError(
                type="api_error", message="error chunk without details",
                retryable=False, code="unknown", provider=self.provider,
            )
        if chunk.thoughts:
            self.thoughts.add(chunk.thoughts)
        if chunk.serving_provider and self.serving is None:
            self.serving = chunk.serving_provider.strip() or None
        metadata = chunk.metadata
        if metadata:
            self.usage = merge_usage(self.usage, normalize_usage(metadata.get("usage")))
            reason = metadata.get("finish_reason")
            if reason:
                self.finish_reason = str(reason)


def _poll(check: Callable[[], bool] | None, name: str) -> bool:
    if check is None:
        return False
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - a broken check must not end the answer
        log.exception("%s callback failed", name)
        return False


async def _next(
    iterator: AsyncIterator[ProcessedChunk], timeout: float | None, clock: Clock | None
) -> ProcessedChunk:
    if timeout is None:
        return await anext(iterator)
    step = asyncio.ensure_future(anext(iterator))
    timer = asyncio.ensure_future((clock or MonotonicClock()).sleep(timeout))
    try:
        done, _ = await asyncio.wait({step, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        step.cancel()
        raise
    finally:
        timer.cancel()
    if step in done:
        return step.result()
    step.cancel()
    await asyncio.wait({step})
    raise _IdleTimeout


async def _close(iterator: AsyncIterator[ProcessedChunk]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is None:
        return
    try:
        await closer()
    except Exception:  # noqa: BLE001 - closing a finished stream is best effort
        log.debug("closing the chunk iterator failed", exc_info=True)
