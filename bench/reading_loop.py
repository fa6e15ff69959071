"""Reading a corpus of real files the way the bot reads them, and what the event loop feels.

    python bench/reading_loop.py [DIR] [--results PATH]

Every .docx, .xlsx, .pdf and .html file under DIR (default: the files kept in
tests/fixtures/documents; `bench/reading_corpus.py assemble` builds the whole public corpus)
goes through the bot's own entry points (`read_office`, `read_pdf_off_loop`,
`html_main_text`) into its reader pool (`bot.readers`, the default settings: 2 processes,
15 s, 512 MiB), two files at a time, while a task on the same loop sleeps 10 ms over and
over and records how late it wakes. The figure is the worst and the 99th-percentile lateness
(target: no stall over 50 ms), with how many files came back as text, as a refusal the member
is told, or as anything else (target: none).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import RESULTS, Figures  # noqa: E402

KEPT = ROOT / "tests" / "fixtures" / "documents"
TICK = 0.010
AT_ONCE = 2
STALL_TARGET_MS = 50.0


from bot.capabilities.reading.attachment_files import UnreadableFile  # noqa: E402
from bot.capabilities.reading.documents import read_office, read_pdf_off_loop  # noqa: E402
from bot.capabilities.reading.links.extract import ExtractionFailed, html_main_text  # noqa: E402 - as the bot has them at start
from bot.readers.pool import PoolConfig, start_readers, stop_readers  # noqa: E402


async def read_one(path: Path) -> str:
    """'text', 'refused' (a note the member reads) or 'failed' (anything else escaped)."""
    data, kind = path.read_bytes(), path.suffix.lower().lstrip(".")
    try:
        if kind == "html":
            await html_main_text(data, None, 15.0)
        elif kind == "pdf":
            await read_pdf_off_loop(data, path.name)
        else:
            await read_office(data, path.name, kind)
        return "text"
    except (UnreadableFile, ExtractionFailed, TimeoutError):
        return "refused"
    except Exception:  # noqa: BLE001 - the figure counts it: a question would have failed
        return "failed"


async def ticker(lateness: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(TICK)
        lateness.append((time.perf_counter() - asked - TICK) * 1000)


async def run(files: list[Path]) -> dict[str, float]:
    await start_readers(PoolConfig())
    lateness: list[float] = []
    stop = asyncio.Event()
    ticking = asyncio.create_task(ticker(lateness, stop))
    slots = asyncio.Semaphore(AT_ONCE)

    async def bounded(path: Path) -> str:
        async with slots:
            return await read_one(path)

    started = time.perf_counter()
    try:
        outcomes = await asyncio.gather(*(bounded(f) for f in files))
    finally:
        stop.set()
        await ticking
        await stop_readers()
    lateness.sort()
    return {"files": len(files), "text": outcomes.count("text"), "refused": outcomes.count("refused"),
            "failed": outcomes.count("failed"), "seconds": time.perf_counter() - started,
            "worst_stall_ms": lateness[-1], "p99_stall_ms": lateness[int(0.99 * (len(lateness) - 1))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=KEPT)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    files = sorted(p for p in args.dir.rglob("*") if p.suffix.lower() in (".docx", ".xlsx", ".pdf", ".html"))
    found = asyncio.run(run(files))
    name = "kept" if args.dir.resolve() == KEPT.resolve() else "corpus"
    figures = Figures("reading_loop")
    for key, value in found.items():
        figures.add(f"{name}.{key}", value)
    print(f"{found['files']} files through the reader pool in {found['seconds']:.1f} s: {found['text']} text, "
          f"{found['refused']} refused with a note, {found['failed']} failed (target 0)")
    print(f"event loop: worst stall {found['worst_stall_ms']:.1f} ms, p99 {found['p99_stall_ms']:.1f} ms "
          f"(target <= {STALL_TARGET_MS:.0f} ms)")
    print(f"figures written to {figures.write(args.results)}")
    return 1 if found["failed"] or found["worst_stall_ms"] > STALL_TARGET_MS else 0


if __name__ == "__main__":
    raise SystemExit(main())
