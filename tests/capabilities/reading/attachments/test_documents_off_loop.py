"""Documents are read off the event loop, in the reader pool's processes."""

from __future__ import annotations

import asyncio
import os

from bot.capabilities.reading.documents import read_office, read_pdf_off_loop, run_reader
from bot.readers.pool import reader_pool
from tests.capabilities.reading.attachments.document_fixtures import docx_bytes, pdf_bytes

STALL_BOUND_S = 0.1
RUNS = 3


async def worst_lateness_while(work) -> tuple[float, object]:
    """`work` awaited while a ticker on the loop records how late it wakes."""
    worst, done = 0.0, False

    async def tick() -> None:
        nonlocal worst
        loop = asyncio.get_running_loop()
        while not done:
            before = loop.time()
            await asyncio.sleep(0.005)
            worst = max(worst, loop.time() - before - 0.005)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.02)
    try:
        result = await work
    finally:
        done = True
        await ticker
    return worst, result


async def test_reading_runs_in_a_reader_process_with_its_deadline() -> None:
    pid = await run_reader("tests.support.reader_doubles:process_of", b"", "notes.docx")
    assert pid != os.getpid() and pid in reader_pool().pids()


async def test_a_hundred_page_pdf_does_not_stall_the_loop() -> None:
    line = "The quick brown fox jumps over the lazy dog. " * 100
    data = pdf_bytes([line] * 100)
    for _ in range(RUNS):  # wall time: a busy host may delay the loop without the bot's help
        worst, part = await worst_lateness_while(read_pdf_off_loop(data, "big.pdf"))
        if worst < STALL_BOUND_S:
            break
    assert worst < STALL_BOUND_S
    assert "[Page 100]" in (part.text or "")


async def test_office_files_are_read_off_the_loop() -> None:
    _, read = await worst_lateness_while(read_office(docx_bytes(["a paragraph"] * 3000), "x.docx", "docx"))
    assert read.sections[0].text.startswith("a paragraph\n")
