"""Drive one normalized stream into a delivery and say how it ended.

Routing: `text` goes to the delivery (which shows it); `function_call` is collected and
the stream keeps draining, so every parallel call of the response comes back, in order;
`error` ends the stream; the `done` chunk brings the finish reason and usage. Thoughts and
the serving provider are read from every chunk. An `Interrupt` ends the stream at once,
even while the provider is silent. At the end the delivery is finished (final edits,
indicator removed) — or only flushed when the reply stays open for a tool round.
The finish is given the answer's `Ending`, so the closing write of the last message can
carry the answer's final controls.

Errors are returned, never rendered: whoever runs the stream knows whether another
attempt may still replace this one and how the failure should be explained.
`run_stream` never raises: a sink failure or an iterator bug becomes part of the result
and is logged. Cancellation is the one thing it lets through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from typing import Literal

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
from stream.capture import CapturedBlock
from stream.consumer import ChunkConsumer
from stream.interrupt import Interrupt, InterruptReason
from stream.limits import StreamLimits
from stream.sink import Ending, SentMessage

log = logging.getLogger(__name__)

DEFAULT_LIMITS = StreamLimits()
StreamStatus = Literal["completed", "function_call", "error", "timeout", "interrupted", "empty_response"]


@dataclass(slots=True)
class StreamResult:
    """How one stream ended and everything the turn needs from it."""

    status: StreamStatus
    text: str = ""
    function_calls: list[FunctionCall] = field(default_factory=list)
    error: ProviderError | None = None
    interrupted: InterruptReason | None = None
    thoughts: list[ThoughtLogEntry] = field(default_factory=list)
    captured_blocks: list[CapturedBlock] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    serving_provider: str | None = None
    messages: list[SentMessage] = field(default_factory=list)
    delivery_failure: str | None = None  # why Discord delivery gave up, if it did
    chunks: int = 0
    # How long the response took to show anything (text, a call or reasoning), in seconds.
    first_content_seconds: float | None = None
    # Where a bound cut the answer: "messages" (the delivery's message limit), and
    # whether the kept reasoning lost its beginning.
    cut_at: str | None = None
    thoughts_cut: bool = False
    # A native web search: the pages the response was grounded on (as the provider cited
    # them, repeats included) and the queries it searched for.
    sources: list[Source] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)


async def run_stream(
    chunks: AsyncIterable[ProcessedChunk],
    delivery: MessageDelivery,
    interrupt: Interrupt | None = None,
    *,
    keep_open_for_calls: bool = False,
    limits: StreamLimits = DEFAULT_LIMITS,
    provider: str | None = None,
) -> StreamResult:
    """Consume `chunks` into `delivery`; see the module docstring. Never raises.

    With `keep_open_for_calls`, a `function_call` outcome only flushes the delivery (the
    indicator stays) so the tool loop can stream the next response into the same
    messages; the turn then finishes the delivery itself. `limits` bound the answer's
    time, calls and kept reasoning (`stream.limits`); the delivery bounds its messages.
    `provider` is named by the errors the stream layer makes itself (a timeout, a bug).
    """
    consumer = ChunkConsumer(delivery, limits, provider)
    try:
        await consumer.run(chunks, interrupt)
    except asyncio.CancelledError:
        # Cancelled from outside: still take the indicator off what was said.
        with contextlib.suppress(BaseException):
            await asyncio.shield(delivery.finish(ending=_ending(consumer, delivery)))
        raise
    status = _status(consumer)
    try:
        if keep_open_for_calls and status == "function_call":
            await delivery.flush()
        else:
            await delivery.finish(ending=_ending(consumer, delivery))
    except Exception:  # noqa: BLE001 - delivery problems are reported, not raised
        log.exception("finishing delivery failed")
    if status is None:
        status = "empty_response" if not delivery.text.strip() else "completed"
    return StreamResult(
        status=status,
        text=delivery.text,
        function_calls=consumer.calls,
        error=consumer.error,
        interrupted=consumer.interrupted,
        thoughts=consumer.thoughts.entries(),
        captured_blocks=delivery.blocks,
        usage=consumer.usage,
        finish_reason=consumer.finish_reason,
        serving_provider=consumer.serving,
        messages=delivery.messages,
        delivery_failure=delivery.failure,
        chunks=consumer.count,
        first_content_seconds=(None if consumer.first_content_at is None
                               else consumer.first_content_at - consumer.started_at),
        cut_at="messages" if delivery.overflowed else None,
        thoughts_cut=consumer.thoughts.cut,
        sources=consumer.sources,
        searches=consumer.searches,
    )


def ending_of(result: StreamResult, interrupted: InterruptReason | None = None) -> Ending:
    """How an answer whose last stream gave `result` ended (for a finish made later, as
    the tool loop's); `interrupted` overrides the result's interrupt reason."""
    return Ending(result.finish_reason, bool(result.thoughts or result.captured_blocks),
                  interrupted or result.interrupted)


def _ending(consumer: ChunkConsumer, delivery: MessageDelivery) -> Ending:
    """How the stream ended, as its delivery's finish is told (before the result exists)."""
    reasoning = not consumer.thoughts.empty or bool(delivery.blocks)
    return Ending(consumer.finish_reason, reasoning, consumer.interrupted)


def _status(consumer: ChunkConsumer) -> StreamStatus | None:
    """The ending the consumer saw; None when the text decides (completed or empty)."""
    if consumer.error is not None:
        return "timeout" if consumer.error.type == "timeout" else "error"
    if consumer.interrupted is not None:
        return "interrupted"
    if consumer.calls:
        return "function_call"
    return None
