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
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from providers.i18n import t
from providers.types import FunctionCall, ProcessedChunk, ProviderError, ThoughtLogEntry
from stream.buffer import MessageDelivery
from stream.capture import CapturedBlock
from stream.clock import Clock, MonotonicClock
from stream.sink import EmbedSpec, SentMessage
from stream.usage import Usage, merge_usage, normalize_usage

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


class _Thoughts:
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
        return [ThoughtLogEntry(kind, "".join(parts), provider) for kind, provider, parts in self._runs]  # type: ignore[arg-type]


class _IdleTimeout(Exception):
    """No chunk arrived within the idle timeout."""


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

    `should_stop` and `follow_up` are polled before each chunk. With
    `continue_after_calls`, a `function_call` outcome only flushes the delivery (the
    indicator stays) so the tool loop can stream the next response into the same
    messages; the turn then finishes the delivery itself.
    """
    thoughts = _Thoughts()
    calls: list[FunctionCall] = []
    error: ProviderError | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    serving: str | None = None
    status: StreamStatus | None = None
    count = 0
    iterator: AsyncIterator[ProcessedChunk] | None = None
    try:
        iterator = aiter(chunks)
        while True:
            if _poll(should_stop, "should_stop"):
                status = "stopped_by_user"
                break
            if _poll(follow_up, "follow_up"):
                status = "follow_up_interrupt"
                break
            try:
                chunk = await _next(iterator, idle_timeout, clock)
            except StopAsyncIteration:
                break
            except _IdleTimeout:
                error = ProviderError(
                    type="timeout",
                    message=f"no data from the provider for {idle_timeout:g} seconds",
                    retryable=True,
                    code="stream_idle_timeout",
                    provider=provider,
                )
                break
            count += 1
            if on_progress is not None:
                _call(on_progress)
            kind = chunk.type
            if kind == "text":
                if chunk.content:
                    delivery.append(chunk.content)
            elif kind == "function_call":
                if chunk.function_call is not None:
                    calls.append(chunk.function_call)
            elif kind == "error":
                error = chunk.error or ProviderError(
                    type="api_error", message="error chunk without details",
                    retryable=False, code="unknown", provider=provider,
                )
            if chunk.thoughts:
                thoughts.add(chunk.thoughts)
            if chunk.serving_provider and serving is None:
                serving = chunk.serving_provider.strip() or None
            metadata = chunk.metadata
            if metadata:
                usage = merge_usage(usage, normalize_usage(metadata.get("usage")))
                reason = metadata.get("finish_reason")
                if reason:
                    finish_reason = str(reason)
            if error is not None:
                break
    except asyncio.CancelledError:
        # Cancelled from outside: still take the indicator off what was said.
        with contextlib.suppress(BaseException):
            await asyncio.shield(delivery.finish())
        raise
    except Exception:  # noqa: BLE001 - the contract: a bug becomes a result
        log.exception("stream iteration failed")
        error = ProviderError(
            type="api_error", message="the stream failed unexpectedly",
            retryable=False, code="stream_internal", provider=provider,
        )
    finally:
        if iterator is not None:
            await _close(iterator)

    if error is not None:
        status = "timeout" if error.type == "timeout" else "error"
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
        thoughts=thoughts.entries(),
        captured_blocks=delivery.blocks,
        usage=usage,
        finish_reason=finish_reason,
        serving_provider=serving,
        messages=delivery.messages,
        error_shown=shown,
        delivery_failure=delivery.failure,
        chunks=count,
    )


def _render(render_error: Callable[[ProviderError], EmbedSpec] | None, error: ProviderError, locale: Any) -> EmbedSpec:
    if render_error is not None:
        try:
            return render_error(error)
        except Exception:  # noqa: BLE001 - fall back to the plain embed
            log.exception("render_error failed")
    return default_error_embed(error, locale)


def _poll(check: Callable[[], bool] | None, name: str) -> bool:
    if check is None:
        return False
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - a broken check must not end the answer
        log.exception("%s callback failed", name)
        return False


def _call(callback: Callable[[], object]) -> None:
    try:
        callback()
    except Exception:  # noqa: BLE001
        log.exception("on_progress callback failed")


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
