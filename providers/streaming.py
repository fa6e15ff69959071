"""Provider-neutral stream plumbing shared by every adapter.

- `SSEDecoder` turns raw body bytes into `(event_name, data_bytes)` pairs. It is
  incremental and split-invariant (any byte split gives the same events) and keeps
  payloads as bytes, because `jiter.from_json` parses bytes directly: decoding to `str`
  first would cost a copy per event on the hot path.
- A body is read through a `PieceReader` (the next network read, `b""` at the end):
  `paced_reader` bounds each wait for the next piece and may space the reads out, and
  `response_timeout` the wait for the response itself (the adapters' `timeout` option).
- `classify_transport_error` maps the failures of the three HTTP stacks the SDKs use
  (httpx, httpx2, aiohttp) plus our own stream errors to a `ProviderError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from providers.errors import STREAM_INTERRUPTED, classify_failure
from providers.types import ProviderError

SSEEvent = tuple[str | None, bytes]
"""`(event name or None, data)`; data lines are joined with `\\n`, as the SSE format says."""

END_OF_BODY: SSEEvent = ("__end_of_body__", b"")
"""What an OpenAI-style adapter feeds its normalizer after the body's last byte."""
READ_FAILURE = "__failure__"
"""Event name of `(READ_FAILURE, exception)`: the transport failed while reading the body."""

PieceReader = Callable[[], Awaitable[bytes]]
"""The next piece of a response body as it came off the network; `b""` once it ended.

Adapters read bodies through a function, not an async iterator: each async-generator
layer between the socket and the decoder is resumed and suspended once per network read,
and on a trickled stream (one small event per read, as providers send) those layers cost
more than decoding the event."""

# A body that never reaches an event boundary is not an SSE stream; stop buffering it.
MAX_PENDING_BYTES = 8 * 1024 * 1024


class MalformedStreamError(Exception):
    """The body is not a well-formed event stream (bad bytes, bad JSON, impossible shape)."""


class StreamTimeoutError(Exception):
    """No response, or no next piece of the stream, within the adapter's `timeout`."""


class StreamInterruptedError(Exception):
    """The body ended before the provider said the answer was complete."""


def _parse_block(block: bytes) -> SSEEvent | None:
    """One event block (lines without the blank terminator) → event, or None when empty."""
    if block.startswith(b"data: ") and b"\n" not in block:
        return None, block[6:]
    if block.startswith(b"event: "):  # the named form (Anthropic, OpenAI's Responses API)
        end = block.find(b"\n")
        if end > 7 and block.startswith(b"data: ", end + 1) and block.find(b"\n", end + 1) < 0:
            named = block[7:end]
            if named.isascii():
                return named.decode("ascii"), block[end + 7 :]
    name: str | None = None
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if not line or line[0] == 0x3A:  # blank, or ":" comment (keep-alives)
            continue
        field, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            try:
                name = value.decode("ascii")
            except UnicodeDecodeError as exc:
                raise MalformedStreamError(f"event name is not ASCII: {value[:40]!r}") from exc
        # id:, retry: and unknown fields carry nothing an adapter needs.
    if not data and name is None:
        return None
    return name, b"\n".join(data)


class SSEDecoder:
    """Incremental server-sent-events decoder over raw byte chunks.

    Lines may end in LF, CRLF or CR; an event ends at a blank line. Comment lines
    (`: keep-alive`) are dropped. Events with neither data nor a name are skipped.
    """

    __slots__ = ("_buffer", "_pending_cr")

    # How one blank-line-delimited block becomes an event; a provider whose bodies carry
    # more than SSE fields (Gemini's bare JSON error lines) overrides only this.
    parse_block = staticmethod(_parse_block)

    def __init__(self) -> None:
        self._buffer = b""
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode every event completed by `chunk`; hold the unfinished tail."""
        if self._pending_cr:
            chunk = b"\r" + chunk
            self._pending_cr = False
        if chunk.endswith(b"\r"):
            # The CR may be the first half of a CRLF split across reads.
            self._pending_cr = True
            chunk = chunk[:-1]
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer + chunk if self._buffer else chunk
        cut = buffer.rfind(b"\n\n")
        if cut < 0:
            if len(buffer) > MAX_PENDING_BYTES:
                raise MalformedStreamError(f"no event boundary in {len(buffer)} bytes")
            self._buffer = buffer
            return []
        self._buffer = buffer[cut + 2 :]
        return self._dispatch(buffer[:cut])

    def finish(self) -> list[SSEEvent]:
        """At end of body: dispatch a last event whose lines are complete; drop a cut line."""
        buffer = self._buffer + (b"\n" if self._pending_cr else b"")
        self._buffer = b""
        self._pending_cr = False
        end = buffer.rfind(b"\n")
        if end < 0:
            return []
        return self._dispatch(buffer[:end])

    def _dispatch(self, complete: bytes) -> list[SSEEvent]:
        """Events of the blank-line-separated blocks in `complete` (all lines whole)."""
        return [e for block in complete.split(b"\n\n") if (e := self.parse_block(block)) is not None]


def reader_of(pieces: AsyncIterator[bytes]) -> PieceReader:
    """An async iterator of byte pieces as a PieceReader (an empty piece is not the end)."""

    async def read() -> bytes:
        async for piece in pieces:
            if piece:
                return piece
        return b""

    return read


class _PacedReader:
    """Wraps a PieceReader: each read must finish within `timeout` seconds (None: no
    bound), and with `interval`, a read starts no sooner than `interval` seconds after
    the previous one ended.

    The timeout is one lazy timer per stream instead of an `asyncio.timeout` per read: a
    read records when it started, and the timer (armed for the oldest deadline that may
    still hold) re-arms itself for the current read's deadline or, once it passed,
    cancels the reading task, which turns that cancellation into `StreamTimeoutError`.
    The time spent waiting for the interval is not part of any read.

    The interval trades a little latency for CPU: a provider sends one small event per
    network write, and what arrives while the reader waits is read in one go, so a busy
    process handles each stream once per interval instead of once per event (with the
    aiohttp transport the socket itself is left unread meanwhile, `body_reader(held=True)`,
    so the bytes wait in the kernel and the loop does not even wake for them). A Discord
    message is edited about once a second at best, so a fraction of that never shows. The body's first interval, from its first piece on,
    is read as it arrives: a provider often sends an opening event (a role, a message
    start) just before the first words, and those words show at once.
    """

    __slots__ = ("_read", "_seconds", "_interval", "_started", "_task", "_timer", "_expired", "_loop",
                 "_next_read", "_eager_until")

    def __init__(self, read: PieceReader, timeout: float | None, interval: float) -> None:
        self._read = read
        self._seconds = timeout
        self._interval = interval
        self._started: float | None = None  # when the current read began (None: not reading)
        self._task: asyncio.Task[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._expired = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next_read = 0.0  # no read before this (0: at once)
        self._eager_until: float | None = None  # set by the first piece

    async def __call__(self) -> bytes:
        loop = self._loop
        if loop is None:  # looked up once: on Python 3.11 each lookup is a getpid() system call
            loop = self._loop = asyncio.get_running_loop()
        started = loop.time()
        if started < self._next_read:
            await asyncio.sleep(self._next_read - started)
            started = loop.time()
        task = self._task = asyncio.current_task(loop)
        cancelling = task.cancelling() if task is not None else 0
        self._started = started
        if self._timer is None and self._seconds is not None:
            self._timer = loop.call_at(started + self._seconds, self._check)
        try:
            piece = await self._read()
        except asyncio.CancelledError:
            self._disarm()
            if self._expired and task is not None and task.uncancel() <= cancelling:
                raise StreamTimeoutError(f"no data from the provider for {self._seconds:g} s") from None
            raise
        except BaseException:  # the body failed: nothing left to time
            self._disarm()
            raise
        finally:
            self._started = None
        if not piece:  # the end of the body
            self._disarm()
        elif self._interval:
            self._space_out(loop.time())
        return piece

    def _space_out(self, now: float) -> None:
        """After a piece: the next read waits for the interval, once the eager start is over."""
        if self._eager_until is None:
            self._eager_until = now + self._interval
        elif now >= self._eager_until:
            self._next_read = now + self._interval

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        """The timer: cancel a read past its deadline, else re-arm for the current one."""
        self._timer = None
        started = self._started
        loop = self._loop
        if started is None or self._task is None or self._seconds is None or loop is None:
            return  # not reading: the next read arms the timer again
        deadline = started + self._seconds
        if loop.time() >= deadline:
            self._expired = True
            self._task.cancel()
        else:
            self._timer = loop.call_at(deadline, self._check)


def paced_reader(read: PieceReader, timeout: float | None, interval: float = 0.0) -> PieceReader:
    """Bound the wait for each next piece (`timeout`, None: no bound) and, with `interval`,
    read at most once per `interval` seconds (see _PacedReader); the reader as is when neither."""
    if timeout is None and not interval:
        return read
    return _PacedReader(read, timeout, interval)


class response_timeout:
    """`async with response_timeout(seconds):` — raise StreamTimeoutError if the body is too slow.

    Bounds the wait for the response headers (the request itself); `None` disables it.
    """

    __slots__ = ("_seconds", "_cm")

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self._cm: Any = None

    async def __aenter__(self) -> None:
        self._cm = asyncio.timeout(self._seconds)
        await self._cm.__aenter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            await self._cm.__aexit__(exc_type, exc, tb)
        except TimeoutError:
            raise StreamTimeoutError(
                f"the provider did not respond within {self._seconds:g} s"
            ) from None
        return False


# ---- transport failures ----------------------------------------------------------------------
_CONNECT = frozenset({"ConnectError", "ClientConnectorError", "ClientConnectionError", "ConnectionRefusedError"})
_TIMEOUT = frozenset({"TimeoutException", "ConnectTimeout", "ReadTimeout", "PoolTimeout",
                      "ServerTimeoutError", "TimeoutError"})
_INTERRUPTED = frozenset({"RemoteProtocolError", "ReadError", "StreamError", "ProtocolError",
                          "ServerDisconnectedError", "ClientPayloadError", "ConnectionResetError",
                          "IncompleteRead", "ClientOSError", "ConnectionError"})


def _mro_names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__]


def classify_transport_error(provider: str, exc: BaseException,
                             wrapper: BaseException | None = None) -> ProviderError | None:
    """Classify a failure below the HTTP status level, or None when it is not one.

    `wrapper` is the SDK error `exc` came wrapped in: the error keeps it as its original.

    Matches by class name across httpx, httpx2 and aiohttp so no stack is imported here.
    """
    names = _mro_names(exc)
    original = wrapper if wrapper is not None else exc
    message = str(exc) or names[0]
    if isinstance(exc, StreamTimeoutError):
        return classify_failure(provider=provider, message=message, timeout=True, original_error=original)
    if isinstance(exc, MalformedStreamError):
        return classify_failure(provider=provider, message=f"malformed stream: {message}",
                                error_type="malformed_stream", original_error=original)
    if isinstance(exc, StreamInterruptedError):
        return classify_failure(provider=provider, message=message,
                                error_type=STREAM_INTERRUPTED, original_error=original)
    for name in names:  # most specific class first
        if name in _TIMEOUT:
            return classify_failure(provider=provider, message=message, timeout=True,
                                    original_error=original)
        if name in _CONNECT:
            return classify_failure(provider=provider, message=f"connection failed: {message}",
                                    connection_failed=True, original_error=original)
        if name in _INTERRUPTED:
            return classify_failure(provider=provider, message=f"stream interrupted: {message}",
                                    error_type=STREAM_INTERRUPTED, original_error=original)
    return None
