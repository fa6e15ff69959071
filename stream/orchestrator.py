"""Drive one normalized stream into a delivery and say how it ended (spec §6).

Routing: `text` goes to the delivery (which shows it); `function_call` is collected and
the stream keeps draining, so every parallel call of the response comes back, in order;
`error` ends the stream; `done` brings the finish reason. Thoughts, usage (normalized,
latest wins) and the serving provider are read from every chunk. Stop and follow-up
requests are polled between chunks; `on_progress` runs per chunk for the turn's stall
watchdog. At the end the delivery is finished (final edits, indicator removed); on an
error the partial text is marked interrupted and the error embed posted, unless the
turn suppresses errors because it may still retry (it then calls `delivery.retract()`
if a retry supersedes the partial answer).

`run_stream` never raises: a sink failure, a callback bug or an iterator bug becomes
part of the result and is logged. Cancellation is the one thing it lets through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from providers.i18n import t
from providers.types import FunctionCall, ProcessedChunk, ProviderError, ThoughtLogEntry
from stream.buffer import MessageDelivery
from stream.capture import CapturedBlock
from stream.clock import Clock
from stream.consumer import ChunkConsumer
from stream.sink import EmbedSpec, SentMessage
from stream.usage import Usage

log = logging.getLogger(__name__)

StreamStatus = Literal[
    "completed",
    "function_call",
    "error",
    "timeout",
    "stopped_by_user",
    "empty_response",
    "follow_up_interrupt",
]
ERROR_COLOR = 0xED4245


@dataclass(slots=True)
class StreamResult:
    """How one stream ended and everything the turn needs from it."""

    status: StreamStatus
    text: str = ""
    function_calls: list[FunctionCall] = field(default_factory=list)
    error: ProviderError | None = None
    thoughts: list[ThoughtLogEntry] = field(default_factory=list)
    captured_blocks: list[CapturedBlock] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    serving_provider: str | None = None
    messages: list[SentMessage] = field(default_factory=list)
    error_shown: bool = False
    delivery_failure: str | None = None  # why Discord delivery gave up, if it did
    chunks: int = 0


def interrupted_note(locale: Any = None) -> str:
    """The italic line that marks an answer cut short by an error."""
    return f"*{t('chat.interrupted', locale)}*"


def default_error_embed(error: ProviderError, locale: Any = None) -> EmbedSpec:
    """A plain embed naming the error class only (never the raw message: no secrets)."""
    code = f" ({error.code})" if error.code else ""
    return EmbedSpec(
        title=t("chat.stream_error_title", locale),
        description=f"`{error.type}`{code}",
        color=ERROR_COLOR,
    )


async def run_stream(
    chunks: AsyncIterable[ProcessedChunk],
    delivery: MessageDelivery,
    *,
    should_stop: Callable[[], bool] | None = None,
    follow_up: Callable[[], bool] | None = None,
    stop_event: asyncio.Event | None = None,
    follow_up_event: asyncio.Event | None = None,
    on_progress: Callable[[], object] | None = None,
    suppress_errors: bool = False,
    locale: Any = None,
    render_error: Callable[[ProviderError], EmbedSpec] | None = None,
    idle_timeout: float | None = None,
    clock: Clock | None = None,
    provider: str | None = None,
    continue_after_calls: bool = False,
) -> StreamResult:
    """Consume `chunks` into `delivery`; see the module docstring. Never raises.

    `should_stop` and `follow_up` are polled before each chunk. `stop_event` and
    `follow_up_event` also interrupt a provider that sends nothing (a reasoning model
    thinking silently): setting one ends the stream at once. With
    `continue_after_calls`, a `function_call` outcome only flushes the delivery (the
    indicator stays) so the tool loop can stream the next response into the same
    messages; the turn then finishes the delivery itself.
    """
    consumer = ChunkConsumer(
        delivery, should_stop=should_stop, follow_up=follow_up, on_progress=on_progress,
        idle_timeout=idle_timeout, clock=clock, provider=provider,
    )
    try:
        if stop_event is None and follow_up_event is None:
            await consumer.consume(chunks)
        else:
            await _consume_until_event(consumer, chunks, stop_event, follow_up_event)
    except asyncio.CancelledError:
        # Cancelled from outside: still take the indicator off what was said.
        with contextlib.suppress(BaseException):
            await asyncio.shield(delivery.finish())
        raise

    error = consumer.error
    status: StreamStatus | None = consumer.interrupt
    if error is not None:
        status = "timeout" if error.type == "timeout" else "error"
    calls = consumer.calls
    shown = False
    try:
        if error is not None and not suppress_errors:
            partial = bool(delivery.text.strip())
            await delivery.finish(note=interrupted_note(locale) if partial else None)
            embed = _render(render_error, error, locale)
            shown = await delivery.send_embed(embed) is not None
        elif continue_after_calls and calls and status is None:
            await delivery.flush()
        else:
            await delivery.finish()
    except Exception:  # noqa: BLE001 - delivery problems are reported, not raised
        log.exception("finishing delivery failed")
    text = delivery.text
    if status is None:
        if calls:
            status = "function_call"
        elif not text.strip():
            status = "empty_response"
        else:
            status = "completed"
    return StreamResult(
        status=status,
        text=text,
        function_calls=calls,
        error=error,
        thoughts=consumer.thoughts.entries(),
        captured_blocks=delivery.blocks,
        usage=consumer.usage,
        finish_reason=consumer.finish_reason,
        serving_provider=consumer.serving,
        messages=delivery.messages,
        error_shown=shown,
        delivery_failure=delivery.failure,
        chunks=consumer.count,
    )


async def _consume_until_event(
    consumer: ChunkConsumer,
    chunks: AsyncIterable[ProcessedChunk],
    stop_event: asyncio.Event | None,
    follow_up_event: asyncio.Event | None,
) -> None:
    """Run the consumer in its own task and cut it short when an event is set."""
    work = asyncio.ensure_future(consumer.consume(chunks))
    watchers = {
        asyncio.ensure_future(event.wait()): interrupt
        for event, interrupt in ((stop_event, "stopped_by_user"), (follow_up_event, "follow_up_interrupt"))
        if event is not None
    }
    try:
        done, _ = await asyncio.wait({work, *watchers}, return_when=asyncio.FIRST_COMPLETED)
        if work not in done:
            work.cancel()
            await asyncio.wait({work})
            if consumer.interrupt is None and consumer.error is None:
                fired = [watchers[w] for w in done if w in watchers]
                consumer.interrupt = "stopped_by_user" if "stopped_by_user" in fired else fired[0]  # type: ignore[assignment]
    finally:
        for watcher in watchers:
            watcher.cancel()
        if not work.done():
            work.cancel()
            await asyncio.wait({work})


def _render(render_error: Callable[[ProviderError], EmbedSpec] | None, error: ProviderError, locale: Any) -> EmbedSpec:
    if render_error is not None:
        try:
            return render_error(error)
        except Exception:  # noqa: BLE001 - fall back to the plain embed
            log.exception("render_error failed")
    return default_error_embed(error, locale)
