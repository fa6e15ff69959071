"""Documents are read off the event loop, one at a time, within a time bound."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from bot.question import documents
from bot.question.attachment_files import UnreadableFile
from bot.question.documents import read_office, read_pdf_off_loop, run_reader
from bot.question.images import ByteBudget
from tests.attachments.document_fixtures import docx_bytes, pdf_bytes

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


async def test_reading_runs_in_the_worker_thread_with_its_deadline() -> None:
    seen: list[tuple[str, float]] = []

    def reader(data: bytes, filename: str, deadline: float) -> str:
        seen.append((threading.current_thread().name, deadline - time.monotonic()))
        return filename.upper()

    assert await run_reader(reader, b"", "notes.docx", seconds=5) == "NOTES.DOCX"
    [(thread, left)] = seen
    assert thread.startswith("document-read") and thread != threading.main_thread().name
    assert 4 < left <= 5


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


async def test_a_reader_that_overruns_is_refused_and_keeps_its_slot_until_it_ends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "GRACE_SECONDS", 0.2)
    slots = ByteBudget(1)
    release = threading.Event()

    def stuck(data: bytes, filename: str, deadline: float) -> None:
        release.wait(5)  # a reader that never checks its deadline

    started = time.monotonic()
    with pytest.raises(UnreadableFile) as refused:
        await run_reader(stuck, b"", "slow.xlsx", seconds=0.1, slots=slots)
    assert refused.value.reason == "timeout"
    assert time.monotonic() - started < 0.1 + documents.GRACE_SECONDS + 1
    assert slots.free == 0  # the thread still runs: the next document waits
    release.set()
    for _ in range(100):
        await asyncio.sleep(0.01)
        if slots.free == 1:
            break
    assert slots.free == 1
