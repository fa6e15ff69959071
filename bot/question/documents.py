"""Documents read off the event loop, one at a time for the whole process, each within a
time bound.

Reading a Word, Excel or PDF file is pure-Python work (python-docx, openpyxl, pypdf) of up
to seconds; on the event loop it would freeze every answer, edit and health check for as
long. Here it runs in a worker thread. Pure-Python work holds the GIL between its
bytecodes, so a second thread would not finish a question sooner, only take more of the
loop's turns: documents wait in line for the one slot, first come first served (as images
wait for their decode budget, `bot.question.images`), and each file's bounds (its size, what
its zip unpacks to, pypdf's limits) bound what the slot holds in memory.

The time bound is `EXTRACT_SECONDS` from when a file's turn comes: the readers check it
between pages, rows and paragraphs and give up; should one not return by then and a
little more, the question goes on without the file, which is refused as `timeout`, and
the slot stays taken until the thread really ends (a running thread cannot be stopped).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import Callable
from typing import TypeVar

from bot.question.attachment_files import UnreadableFile
from bot.question.images import ByteBudget
from bot.question.office_files import OfficeText, docx_text, xlsx_text
from bot.question.pdf_files import read_pdf
from providers.types import DocumentPart

EXTRACT_THREADS = 1
EXTRACT_SECONDS = 15.0
GRACE_SECONDS = 2.0  # past the bound, for a reader that checks its deadline only between pages
_executor = concurrent.futures.ThreadPoolExecutor(max_workers=EXTRACT_THREADS,
                                                  thread_name_prefix="document-read")
# Slots, not bytes: ByteBudget is the first-come-first-served line images use.
EXTRACT_SLOTS = ByteBudget(EXTRACT_THREADS)

T = TypeVar("T")


def _with_deadline(read: Callable[..., T], data: bytes, filename: str, seconds: float) -> T:
    """`read` in this worker thread, its deadline counted from now (not from the queue)."""
    return read(data, filename, deadline=time.monotonic() + seconds)


def _free_when_done(loop: asyncio.AbstractEventLoop, slots: ByteBudget,
                    job: concurrent.futures.Future[T]) -> None:
    """Give the slot back when the thread is done, not when a caller stopped waiting."""
    def free(_: concurrent.futures.Future[T]) -> None:
        try:
            loop.call_soon_threadsafe(slots.release, 1)
        except RuntimeError:  # the loop is closed: none of its tasks waits any more
            slots.release(1)

    job.add_done_callback(free)


async def run_reader(read: Callable[..., T], data: bytes, filename: str, *,
                     seconds: float = EXTRACT_SECONDS, slots: ByteBudget | None = None) -> T:
    """`read(data, filename, deadline=...)` in the worker thread once a slot is free; raises
    what it raises, or `UnreadableFile("timeout")` when it overruns its bound."""
    slots = slots or EXTRACT_SLOTS
    loop = asyncio.get_running_loop()
    await slots.reserve(1)
    try:
        job = _executor.submit(functools.partial(_with_deadline, read, data, filename, seconds))
    except BaseException:
        slots.release(1)
        raise
    _free_when_done(loop, slots, job)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(job), seconds + GRACE_SECONDS)
    except TimeoutError as exc:
        raise UnreadableFile("timeout") from exc


async def read_office(data: bytes, filename: str, kind: str) -> OfficeText:
    """A .docx (`kind` "docx") or .xlsx ("xlsx") as text, read off the loop."""
    return await run_reader(docx_text if kind == "docx" else xlsx_text, data, filename)


async def read_pdf_off_loop(data: bytes, filename: str) -> DocumentPart:
    """`read_pdf` off the loop."""
    return await run_reader(read_pdf, data, filename)
