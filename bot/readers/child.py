"""One reader process: read the documents its pool sends, one at a time, until the pipe closes.

Started as `python -m bot.readers.child FD MEMORY_BYTES` (FD: its end of a socket pair), so
it holds none of the bot's state (no sockets, no keys, no event loop): it imports this
module, and each reader's module the first time that reader is asked for. Its address space is capped (`RLIMIT_AS`), so a file that would
grow past the cap fails with MemoryError here instead of swapping the host; the process
then ends and the pool starts a fresh one. Logging and warnings are off: a reader's
messages quote the file, and this process shares the bot's stderr, its log.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import logging
import resource
import signal
import sys
import time
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

# What the pool sends: the reader's import path ("module:function"), its arguments, and
# the seconds it may take (None: a reader without a `deadline` keyword).
Job = tuple[str, tuple[Any, ...], float | None]
# What comes back: ("read", value) or ("failed", reason, the exception's type name).
Reply = tuple[str, Any] | tuple[str, str, str]
PR_SET_PDEATHSIG = 1  # prctl(2)


def serve(conn: Connection, memory_bytes: int) -> None:
    """The process's whole life."""
    _bound_to_the_bot()
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    while True:
        try:
            job: Job = conn.recv()
        except (EOFError, OSError):
            return  # the pool closed the pipe: the bot is stopping
        reply, spent = _run(job)
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("failed", "out_of_memory", "MemoryError"))
            return
        except Exception as exc:  # noqa: BLE001 - a value that cannot be pickled is the reader's failure
            conn.send(("failed", "reader_failed", type(exc).__name__))
        if spent:
            return  # memory ran out once: the next document gets a fresh process


def _bound_to_the_bot() -> None:
    """Ctrl-C is the bot's to handle; and when the bot ends, even killed outright, the
    kernel kills this process, mid-document or not."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):  # Linux only: elsewhere the bot's close kills it
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _reader(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def _run(job: Job) -> tuple[Reply, bool]:
    """The reader's value, or why it failed (its own `reason` when it names one); and
    whether this process ran out of memory."""
    path, args, seconds = job
    try:
        read = _reader(path)
        kwargs = {} if seconds is None else {"deadline": time.monotonic() + seconds}
        return ("read", read(*args, **kwargs)), False
    except MemoryError:
        return ("failed", "out_of_memory", "MemoryError"), True
    except Exception as exc:  # noqa: BLE001 - whatever a reader meets is one unreadable file
        reason = getattr(exc, "reason", None)
        return ("failed", reason if isinstance(reason, str) else "reader_failed", type(exc).__name__), False


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])), int(sys.argv[2]))
