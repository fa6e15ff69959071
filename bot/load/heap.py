"""The process's heap, tuned for a long-running bot with many answers open: the C allocator
before start-up, the garbage collector once start-up is done. Both are called by
`python -m bot` (`bot/__main__.py`, `bot/lifecycle.py`); importing this module tunes nothing.

Once started, the process holds about a million long-lived objects (modules, SDK types,
the command tree) that every full collection would walk again, and hundreds of answers
streaming at once allocate fast enough that the default threshold (a young collection
every 700 allocations) collects thousands of times a minute. Measured with
`bench/load.py` (500 answers at once): the collector took 1.3 s of the bot's 12.8 s of
CPU; with the start-up heap frozen and young collections every 10,000 allocations, 0.3 s.
Objects freed by reference counting (nearly all) are freed at once either way.
"""

from __future__ import annotations

import ctypes
import gc

YOUNG_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)
M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD_BYTES = 1024 * 1024


def return_large_blocks() -> None:
    """Call once before start-up: make glibc give every block of a megabyte or more back to
    the system when it is freed.

    glibc serves large blocks from its heap instead of their own mappings once a block that
    large was freed (its threshold adapts), and keeps what a thread freed in that thread's
    arena: each image decode thread (`bot/capabilities/reading/images.py`) then kept a decode's peak
    resident (four 4-megapixel WebPs in a row left 142 MB behind instead of 74) and the
    decode budget no longer bounded memory. A fixed threshold (what `MALLOC_MMAP_THRESHOLD_`
    sets) keeps large blocks mapped and unmaps them when freed. Nothing happens without glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


def settle_heap() -> None:
    """Call once start-up is done: collect its garbage, then keep what is left (alive for
    the life of the process) out of every later collection."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
