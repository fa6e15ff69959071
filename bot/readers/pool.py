"""The reader pool: a few child processes, each with a pipe, handed out one document at a time.

concurrent.futures.ProcessPoolExecutor cannot end one stuck task (only the whole pool,
and a worker that dies breaks it for everyone). pebble's ProcessPool can time a task out
and replace its worker, but its workers are multiprocessing children: started by spawn or
forkserver they inherit the bot's environment (its Discord token and provider keys) and
re-run a script's main module, and what it would leave to write here (a memory cap, a
bounded wait for a free worker, a kill when the asking question stops) is most of this
module anyway. So the pool is small and hand-written: an idle queue of children
(`_Child`), each document sent through the child's pipe by a daemon thread (the send
and the wait block, never the event loop), and a child that overruns its deadline, runs
out of memory, dies or is abandoned by a stopped question killed (SIGKILL) and replaced
in the background.

Children are fresh interpreters (`python -m bot.readers.child`), not forks, with an
environment of their own: they share none of the bot's memory, sockets, environment or
keys, and cost a bare interpreter each until a reader's module is first imported in them.

A question's preparation has one deadline (`preparation_deadline`): each document gets
what is left of it, if that is less than its own deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import io
import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from bot.readers.child import Job, Reply

log = logging.getLogger(__name__)
T = TypeVar("T")

MIB = 1024 * 1024
KILL_GRACE_SECONDS = 1.0  # past a document's deadline: a reader checks it only between pages
REAP_SECONDS = 5.0
# A reply is a document's text or the PDF itself (attachments are bounded well below this).
REPLY_LIMIT = 128 * MIB
# What a reply may rebuild besides plain data (`_ReplyUnpickler`): the readers' results.
READER_RESULT_TYPES = frozenset({
    ("bot.capabilities.reading.office_files", "OfficeText"), ("bot.capabilities.reading.office_files", "Section"),
    ("providers.types", "DocumentPart"),
})
ROOT = str(Path(__file__).resolve().parents[2])  # where `bot` is imported from
_preparation_ends: contextvars.ContextVar[float | None] = contextvars.ContextVar("preparation_ends", default=None)


@dataclass(frozen=True)
class PoolConfig:
    """The operator's bounds (READER_* settings)."""

    processes: int = 2
    seconds: float = 15.0  # one document, from when its child takes it
    memory_mib: int = 512  # one child's address space
    wait_seconds: float = 10.0  # for a free child, before the file is left out as "busy"

    @classmethod
    def of(cls, settings: Any) -> PoolConfig:
        return cls(settings.READER_PROCESSES, settings.READER_SECONDS, settings.READER_MEMORY_MIB,
                   settings.READER_WAIT_SECONDS)


class ReadFailed(Exception):
    """A document not read: `reason` is the reader's own (e.g. "encrypted"), or "timeout",
    "out_of_memory", "busy" (no free child in time) or "reader_failed"; `detail` is
    the exception's type name, for the log."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Reading:
    """One document for a reader: its import path ("module:function") and arguments; a
    reader that `takes_deadline` is also given `deadline=` (a `time.monotonic()` value)."""

    reader: str
    args: tuple[Any, ...]
    takes_deadline: bool = True
    seconds: float | None = None  # a deadline shorter than the pool's, this reader's own


@contextlib.contextmanager
def preparation_deadline(seconds: float) -> Iterator[None]:
    """Every document read within this block (and the tasks it starts) ends by `seconds` from now."""
    token = _preparation_ends.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _preparation_ends.reset(token)


class _Child:
    """One reader process and the bot's end of its pipe (a socket pair, pickled messages)."""

    def __init__(self, memory_bytes: int) -> None:
        mine, theirs = socket.socketpair()
        with mine, theirs:
            self.conn = Connection(os.dup(mine.fileno()))
            self.process = subprocess.Popen(  # noqa: S603 - this interpreter, this package's module
                [sys.executable, "-m", "bot.readers.child", str(theirs.fileno()), str(memory_bytes)],
                pass_fds=(theirs.fileno(),), env=_child_environment(), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, close_fds=True)

    def exchange(self, job: Job) -> Reply:
        """Send one document and wait for its reply (in a pipe thread: both block). A killed
        child closes its end, so this ends with EOFError or a connection error; a reply
        past `REPLY_LIMIT` with OSError, unread."""
        self.conn.send(job)
        return reply_of(self.conn.recv_bytes(REPLY_LIMIT))

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()

    def reap(self) -> None:
        """Kill and wait for the process; close the pipe (blocking)."""
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(REAP_SECONDS)
        self.conn.close()


class _ReplyUnpickler(pickle.Unpickler):
    """Rebuilds only the readers' result types. A child parsed a hostile file: should the
    file have taken the child over, its reply still cannot name a function for the bot to
    call (pickle's usual way to run code) — only plain data and these dataclasses."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in READER_RESULT_TYPES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a reader's reply may not hold {module}.{name}")


def reply_of(raw: bytes) -> Reply:
    """A child's reply, unpickled with `_ReplyUnpickler`; an unreadable one is its failure."""
    try:
        reply = _ReplyUnpickler(io.BytesIO(raw)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        return ("failed", "reader_failed", type(exc).__name__)
    if not isinstance(reply, tuple) or not reply or reply[0] not in ("read", "failed"):
        return ("failed", "reader_failed", "reply")
    return reply  # type: ignore[return-value]


def _child_environment() -> dict[str, str]:
    """What a reader process sees of the environment: where Python finds this package and
    the locale, never the bot's keys or token."""
    keep = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "TZ") if name in os.environ}
    paths = [ROOT, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**keep, "PYTHONPATH": os.pathsep.join(paths), "PYTHONDONTWRITEBYTECODE": "1"}


class ReaderPool:
    """The children and the documents waiting for one (see the module docstring)."""

    def __init__(self, config: PoolConfig) -> None:
        self.config = config
        self._idle: asyncio.Queue[_Child] = asyncio.Queue()
        self._children: set[_Child] = set()
        self._renewing: set[asyncio.Task[None]] = set()
        self._started: asyncio.Future[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    async def start(self) -> None:
        """Start the children (once; a second call waits for the first)."""
        if self._started is None:
            self.loop = asyncio.get_running_loop()
            self._started = self.loop.create_future()
            try:
                children = [self._spawn() for _ in range(self.config.processes)]
            except BaseException as exc:
                self._started.set_exception(exc)
                raise
            for child in children:
                self._idle.put_nowait(child)
            self._started.set_result(None)
        await asyncio.shield(self._started)

    def _spawn(self) -> _Child:
        """A new child, started from the loop's thread: the kernel kills a child when the
        thread that started it ends (`PR_SET_PDEATHSIG`), and this one lasts as the bot."""
        child = _Child(self.config.memory_mib * MIB)
        self._children.add(child)
        return child

    def _seconds(self, reading: Reading) -> float:
        """This document's deadline: the pool's, the reader's own, or what is left of the
        preparation's, whichever comes first."""
        bounds = [self.config.seconds, reading.seconds]
        ends = _preparation_ends.get()
        if ends is not None:
            bounds.append(ends - time.monotonic())
        return min(bound for bound in bounds if bound is not None)

    async def read(self, reading: Reading) -> Any:
        """The reader's value; ReadFailed naming why there is none."""
        await self.start()
        seconds = self._seconds(reading)
        if seconds <= 0:
            raise ReadFailed("timeout")
        child = await self._take(min(self.config.wait_seconds, seconds))
        seconds = self._seconds(reading)
        job: Job = (reading.reader, reading.args, seconds if reading.takes_deadline else None)
        exchange = _in_thread(lambda: child.exchange(job))
        try:
            grace = KILL_GRACE_SECONDS if reading.takes_deadline else 0.0
            reply = await asyncio.wait_for(asyncio.shield(exchange), max(seconds, 0) + grace)
        except TimeoutError:
            self._renew(child, exchange)
            raise ReadFailed("timeout") from None
        except (EOFError, OSError) as exc:  # the child died under the reader: a crash, the OOM killer
            self._renew(child, exchange)
            raise ReadFailed("reader_failed", type(exc).__name__) from None
        except BaseException:  # cancelled: the question stopped, its document is dropped
            self._renew(child, exchange)
            raise
        if reply[0] == "read":
            self._idle.put_nowait(child)
            return reply[1]
        _, reason, detail = reply
        if detail == "MemoryError":  # the child ends itself: its heap is spent
            self._renew(child, exchange)
        else:
            self._idle.put_nowait(child)
        raise ReadFailed(reason, detail)

    async def _take(self, seconds: float) -> _Child:
        try:
            return await asyncio.wait_for(self._idle.get(), seconds)
        except TimeoutError:
            raise ReadFailed("busy") from None

    def _renew(self, child: _Child, exchange: asyncio.Future[Reply]) -> None:
        """Kill `child` now and start its replacement in the background."""
        child.kill()
        task = asyncio.get_running_loop().create_task(self._replace(child, exchange))
        self._renewing.add(task)
        task.add_done_callback(self._renewing.discard)

    async def _replace(self, child: _Child, exchange: asyncio.Future[Reply]) -> None:
        exchange.add_done_callback(_retrieved)
        await asyncio.wait({exchange})  # its thread ends with the child's pipe
        await _in_thread(child.reap)
        self._children.discard(child)
        if self.closed:
            return
        self._idle.put_nowait(self._spawn())

    def pids(self) -> list[int]:
        """The children's process ids (for tests and the memory benchmark)."""
        return [child.process.pid for child in self._children if child.process.pid is not None]

    async def close(self) -> None:
        """Kill every child (a reader holds nothing worth waiting for) and wait for them."""
        self.closed = True
        for task in list(self._renewing):
            task.cancel()
        children = list(self._children)
        for child in children:
            child.kill()
        await asyncio.gather(*(_in_thread(child.reap) for child in children))
        self._children.clear()

    def kill_now(self) -> None:
        """Kill every child without waiting (a pool whose event loop is gone)."""
        self.closed = True
        for child in list(self._children):
            child.kill()


def _in_thread(call: Callable[[], T]) -> asyncio.Future[T]:
    """`call()` in a daemon thread of its own, as a future of the running loop: the pipe's
    send and wait block, and a thread waiting on a child nobody killed (a bot ending
    without closing its pool) must not hold the interpreter's exit, as a pool thread would."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result, error = call(), None
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits it
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="reader-pipe", daemon=True).start()
    return future


def _retrieved(future: asyncio.Future[Reply]) -> None:
    """A killed child's exchange ends with EOFError: expected, and not worth a log line."""
    if not future.cancelled():
        future.exception()


_pool: ReaderPool | None = None
_config = PoolConfig()


def configured() -> PoolConfig:
    """The bounds the pool reads with (what the members' notes name)."""
    return _config


def configure(config: PoolConfig) -> None:
    """The operator's bounds, for the pool the bot starts (`start_readers`)."""
    global _config
    _config = config


def reader_pool() -> ReaderPool:
    """The process's pool on the running loop, made (with the configured bounds) when
    there is none yet, or when the last one served a loop that is gone (tests)."""
    global _pool
    loop = asyncio.get_running_loop()
    if _pool is None or _pool.closed or (_pool.loop is not None and _pool.loop is not loop):
        if _pool is not None and not _pool.closed:
            _pool.kill_now()
        _pool = ReaderPool(_config)
    return _pool


async def start_readers(config: PoolConfig) -> ReaderPool:
    """The bot starts its pool with its settings, so the first document does not wait for it."""
    configure(config)
    pool = reader_pool()
    await pool.start()
    return pool


async def stop_readers() -> None:
    """The bot stops: its children are killed."""
    global _pool
    if _pool is not None:
        pool, _pool = _pool, None
        await pool.close()
