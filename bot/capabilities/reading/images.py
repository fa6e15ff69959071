"""Attached images decoded off the event loop, two at once, within one memory budget for
the whole process.

Decoding is CPU work of up to seconds and memory of up to hundreds of megabytes (one
1.6 KB lossless WebP of 6324×6324 took 1.8 s and 650 MB); on the event loop it froze
every answer, edit and health check for as long. Here it runs in `DECODE_THREADS` worker
threads (Pillow's codecs, conversions and resampling release the GIL), and before any
pixel is decoded each image reserves what decoding it will hold at its peak from one
budget of `DECODE_BUDGET_BYTES` for the process (`decode_cost`, from the header, after a
JPEG is drafted to the scale its 1,568-pixel output needs); a decode waits in line until
its share is free, so two decodes together never hold more than the budget.

An image whose decode alone would need more than the budget is refused before it is
decoded, and the member's note names it with the megapixels its kind is read to. A
lossless WebP cannot be drafted (Pillow holds 16 bytes a pixel while loading one), so a
WebP is read to about 4.6 megapixels, a PNG to about 12.7 (7 with alpha), a JPEG to the
40 it always was. Decoding in a subprocess was the other way: it would only move the same
bytes to another process of the same host and add one to start, so refusing is the
honest bound. The budget bounds resident memory because `python -m bot` has glibc unmap
large blocks when they are freed (`bot/load/heap.py::return_large_blocks`, at start-up).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures

from bot.capabilities.reading.attachment_files import (
    DECODE_BUDGET_BYTES,
    OpenedImage,
    decode_opened,
    open_image,
)
from providers.types import ImagePart

# Two at once: a decode keeps one core busy (the GIL is released), so two use the two
# cores of a small host between them and the event loop still gets its turn; more would
# not finish a question sooner there, only hold more decoded pixels at the same time. The
# byte budget, not this number, bounds memory. The threads keep the normal priority: one
# holds the GIL between its C calls, and a lower-priority one the scheduler leaves behind
# other work keeps the event loop waiting too (measured on a busy host: 0.4 s stalls at
# niceness 10 against 55 ms without).
DECODE_THREADS = 2
_executor = concurrent.futures.ThreadPoolExecutor(max_workers=DECODE_THREADS, thread_name_prefix="image-decode")

class ByteBudget:
    """Bytes shared out first come, first served, on one event loop: a large reservation
    waits for its turn instead of being overtaken forever by small ones."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.free = total
        self._waiting: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()

    async def reserve(self, amount: int) -> None:
        """Wait until `amount` (at most `total`) is free and nobody is before us, then take it."""
        amount = min(amount, self.total)
        if not self._waiting and amount <= self.free:
            self.free -= amount
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (amount, waiter)
        self._waiting.append(entry)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release(amount)  # granted just as we were cancelled: give it back
            else:
                if entry in self._waiting:
                    self._waiting.remove(entry)
                self._grant()  # the next in line may fit now
            raise

    def release(self, amount: int) -> None:
        self.free += min(amount, self.total)
        self._grant()

    def _grant(self) -> None:
        while self._waiting and self._waiting[0][0] <= self.free:
            amount, waiter = self._waiting.popleft()
            if waiter.cancelled():  # its task is leaving; it takes nothing
                continue
            self.free -= amount
            waiter.set_result(None)


DECODE_BUDGET = ByteBudget(DECODE_BUDGET_BYTES)


def _release_when_done(loop: asyncio.AbstractEventLoop, budget: ByteBudget, amount: int,
                       job: concurrent.futures.Future[ImagePart]) -> None:
    """Give the share back when the thread is really done, not when a cancelled caller left
    (a running decode cannot be stopped: its memory is held until it ends)."""
    def release(_: concurrent.futures.Future[ImagePart]) -> None:
        try:
            loop.call_soon_threadsafe(budget.release, amount)
        except RuntimeError:  # the loop is closed: none of its tasks waits any more
            budget.release(amount)

    job.add_done_callback(release)


async def decode_image(data: bytes, budget: ByteBudget | None = None) -> ImagePart:
    """`data` as the image part the model gets, decoded in a worker thread once its peak
    memory is reserved from `budget` (the process's); raises `UnreadableFile` as
    `decode_opened` does."""
    budget = budget or DECODE_BUDGET
    loop = asyncio.get_running_loop()
    opened: OpenedImage = await loop.run_in_executor(_executor, open_image, data, budget.total)
    try:
        await budget.reserve(opened.cost)
        try:
            job = _executor.submit(decode_opened, opened)
        except BaseException:
            budget.release(opened.cost)
            raise
    except BaseException:
        opened.image.close()
        raise
    _release_when_done(loop, budget, opened.cost, job)
    return await asyncio.wrap_future(job)
