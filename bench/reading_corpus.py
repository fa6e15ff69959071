"""Every document reader run on every file of a real-world corpus: what each one reads,
names in a note, leaves empty without a note, or fails on, how long it takes and what it
holds.

    python bench/reading_corpus.py assemble DIR [--mirrors /work/.mirror]
    python bench/reading_corpus.py run DIR [--readers bot-docx,bot-xlsx,bot-pdf,bot-html] [--json OUT]
    python bench/reading_corpus.py        (as `make bench` runs it: the kept files, tests/fixtures/documents)

`assemble` copies the .pdf, .docx, .xlsx and .html files of public test corpora (`SOURCES`, each
at a pinned commit) from local bare mirrors of their repositories (`git clone --mirror`
of each URL; `git --git-dir=... show COMMIT:path` reads them) into DIR/<format>/. Git LFS
pointers and blobs a mirror left out are skipped. `run` reads every file of DIR (any tree
of such files) with each reader named: one child process per reader imports its library
once, then forks a grandchild per file, which reads it under a deadline and reports the
outcome, the seconds and its peak RSS growth (the fork is killed past `KILL_SECONDS`).
Outcomes: `text`, `note` (refused with a reason the member is told, or a PDF without a
text layer, which the bot sends with a note), `empty` (no text and no note: a silent
loss), `exception` (anything but a refusal escaped: a failed question) and `killed`.

Readers other than the bot's (`CANDIDATES`) need their libraries installed beside; they
are what the bot's choice was measured against (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEPT = ROOT / "tests" / "fixtures" / "documents"  # what `make bench` reads: the files kept in the repository
KILL_SECONDS = 30.0
READ_SECONDS = 15.0  # the bot's own per-document bound, handed to its readers
EXTENSIONS = (".pdf", ".docx", ".xlsx", ".html")
# (repository, commit, folder) of each public corpus; the files keep their licences there.
SOURCES = (
    ("py-pdf/sample-files", "6921079eb3e1ed0944db5ec75016910d59da7fdb", ""),
    ("py-pdf/pypdf", "f6853ccd3ff492309c84060186aabc88ed472ffd", "resources"),
    ("apache/poi", "a528d43590b3f71aa94310de881a35af887fdd0f", "test-data/document"),
    ("apache/poi", "a528d43590b3f71aa94310de881a35af887fdd0f", "test-data/spreadsheet"),
    ("tafia/calamine", "263762c8e98ef25da8511d9c5ea1783493e3bf6d", "tests"),
    ("python-openxml/python-docx", "e45454602b53e8e572b179ccf1c91093ec9f4ed7", "tests/test_files"),
    ("adbar/trafilatura", "e90b0ef51ab026fdb905fb6c5b3c84dd3d784fd5", "tests/eval"),
)


def assemble(target: Path, mirrors: Path) -> int:
    """Copy the corpus files out of the mirrors; returns how many were written."""
    written = 0
    for repository, commit, folder in SOURCES:
        git_dir = mirrors / repository.replace("/", "+") / "repo"
        listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit, folder or "."],
                                 capture_output=True, text=True, check=True).stdout.split("\n")
        for path in (p for p in listing if p.lower().endswith(EXTENSIONS)):
            shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                                   capture_output=True, check=False)
            data = shown.stdout
            if shown.returncode or data.startswith(b"version https://git-lfs"):
                continue  # a blob the mirror left out, or a Git LFS pointer
            out = target / path.rsplit(".", 1)[-1].lower() / f"{repository.replace('/', '+')}+{path.replace('/', '+')}"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            written += 1
    return written


# ---- readers: (extension, loader returning a function bytes, name -> (text, note)) ----

def _preload(*modules: str) -> None:
    """Import the reader's libraries before the forks, as a bot that has read one file has
    them: a file's figures are its reading, not the import."""
    for module in modules:
        importlib.import_module(module)


def _bot_office(kind: str) -> Callable[[bytes, str], tuple[str, str | None]]:
    sys.path.insert(0, str(ROOT))
    from bot.capabilities.reading.attachment_files import UnreadableFile
    from bot.capabilities.reading.office_files import docx_text, xlsx_text
    reader = docx_text if kind == "docx" else xlsx_text
    _preload("lxml.etree", "openpyxl")

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        try:
            office = reader(data, name, time.monotonic() + READ_SECONDS)
        except UnreadableFile as exc:
            return "", exc.reason
        return "\n".join(section.text for section in office.sections), None
    return read


def _bot_pdf() -> Callable[[bytes, str], tuple[str, str | None]]:
    sys.path.insert(0, str(ROOT))
    _preload("pypdf")
    from bot.capabilities.reading.attachment_files import UnreadableFile
    from bot.capabilities.reading.pdf_files import read_pdf

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        try:
            part = read_pdf(data, name, time.monotonic() + READ_SECONDS)
        except UnreadableFile as exc:
            return "", exc.reason
        return (part.text, None) if part.text else ("", "pdf_no_text")  # sent whole, the member told
    return read


def _bot_html() -> Callable[[bytes, str], tuple[str, str | None]]:
    sys.path.insert(0, str(ROOT))
    _preload("trafilatura")
    from bot.capabilities.reading.links.extract import MarkupTooComplex, _main_text

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        try:
            return _main_text(data)[1], None
        except MarkupTooComplex:
            return "", "too_complex"
    return read


def _python_docx() -> Callable[[bytes, str], tuple[str, str | None]]:
    import io

    import docx
    from docx.table import Table

    def read(data: bytes, name: str) -> tuple[str, str | None]:  # main's reader: body blocks only
        lines = []
        for block in docx.Document(io.BytesIO(data)).iter_inner_content():
            if isinstance(block, Table):
                lines += [" | ".join(c.text for c in row.cells) for row in block.rows]
            else:
                lines.append(block.text)
        return "\n".join(lines), None
    return read


def _docx2python() -> Callable[[bytes, str], tuple[str, str | None]]:
    import io

    from docx2python import docx2python

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        with docx2python(io.BytesIO(data)) as content:
            return content.text, None
    return read


def _calamine() -> Callable[[bytes, str], tuple[str, str | None]]:
    import io

    from python_calamine import CalamineWorkbook

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
        rows = []
        for sheet in book.sheet_names[:3]:
            for number, row in enumerate(book.get_sheet_by_name(sheet).iter_rows()):
                if number >= 201:
                    break
                rows.append(",".join(str(v) for v in row[:51]))
        return "\n".join(rows), None
    return read


def _pypdfium2() -> Callable[[bytes, str], tuple[str, str | None]]:
    import pypdfium2

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        document = pypdfium2.PdfDocument(data)
        texts = [document[i].get_textpage().get_text_range() for i in range(min(len(document), 100))]
        return "\n".join(texts).strip(), None if any(t.strip() for t in texts) else "pdf_no_text"
    return read


def _pdfminer() -> Callable[[bytes, str], tuple[str, str | None]]:
    import io

    from pdfminer.high_level import extract_text

    def read(data: bytes, name: str) -> tuple[str, str | None]:
        text = extract_text(io.BytesIO(data), maxpages=100).strip()
        return text, None if text else "pdf_no_text"
    return read


READERS: dict[str, tuple[str, Callable[[], Callable[[bytes, str], tuple[str, str | None]]]]] = {
    "bot-docx": ("docx", lambda: _bot_office("docx")), "bot-xlsx": ("xlsx", lambda: _bot_office("xlsx")),
    "bot-pdf": ("pdf", _bot_pdf), "bot-html": ("html", _bot_html),
}
CANDIDATES: dict[str, tuple[str, Callable[[], Callable[[bytes, str], tuple[str, str | None]]]]] = {
    "python-docx": ("docx", _python_docx), "docx2python": ("docx", _docx2python),
    "calamine": ("xlsx", _calamine), "pypdfium2": ("pdf", _pypdfium2), "pdfminer": ("pdf", _pdfminer),
}


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))


def _one(read: Callable[[bytes, str], tuple[str, str | None]], path: Path) -> dict[str, object]:
    """Read one file in this (forked) process: outcome, seconds, peak RSS growth in MiB."""
    data = path.read_bytes()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak starts again here, not at the parent's before the fork
    before = _status_kib("VmRSS")
    started = time.perf_counter()
    try:
        text, note = read(data, path.name)
        outcome = "note" if note else ("text" if text.strip() else "empty")
        detail = note or ""
    except Exception as exc:  # what escapes a reader is the finding
        outcome, detail = "exception", f"{type(exc).__module__}.{type(exc).__name__}"
    seconds = time.perf_counter() - started
    peak = _status_kib("VmHWM")
    return {"file": str(path), "outcome": outcome, "detail": detail, "seconds": round(seconds, 4),
            "rss_mib": round(max(0, peak - before) / 1024, 1)}


def _child(name: str, files: list[str]) -> None:
    """The reader's process: its library imported once, then a fork per file."""
    read = {**READERS, **CANDIDATES}[name][1]()
    for file in files:
        reading, writing = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reading)
            os.write(writing, json.dumps(_one(read, Path(file))).encode())
            os._exit(0)
        os.close(writing)
        deadline = time.monotonic() + KILL_SECONDS
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                break
            time.sleep(0.005)
        chunks = []
        while chunk := os.read(reading, 65536):
            chunks.append(chunk)
        os.close(reading)
        line = b"".join(chunks).decode() or json.dumps({"file": file, "outcome": "killed", "detail": "",
                                                        "seconds": KILL_SECONDS, "rss_mib": 0})
        print(line, flush=True)


def _summary(name: str, results: list[dict[str, object]]) -> dict[str, object]:
    seconds = sorted(float(r["seconds"]) for r in results)  # type: ignore[arg-type]
    count = {o: sum(r["outcome"] == o for r in results) for o in ("text", "note", "empty", "exception", "killed")}

    def pct(p: float) -> float:
        return round(seconds[min(len(seconds) - 1, int(p * len(seconds)))], 3) if seconds else 0.0
    return {"reader": name, "files": len(results), **count, "p50_s": pct(0.5), "p95_s": pct(0.95),
            "max_s": seconds[-1] if seconds else 0.0,
            "peak_rss_mib": max((float(r["rss_mib"]) for r in results), default=0.0)}  # type: ignore[arg-type]


def run(corpus: Path, names: list[str], python: str) -> list[dict[str, object]]:
    """Each reader over the corpus files of its format; per-file results and a summary each."""
    summaries = []
    for name in names:
        extension = "." + {**READERS, **CANDIDATES}[name][0]
        files = sorted(str(p) for p in corpus.rglob("*") if p.is_file() and p.name.lower().endswith(extension))
        out = subprocess.run([python, __file__, "child", name], input="\n".join(files), capture_output=True,
                             text=True, check=False)
        results = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        summary = _summary(name, results)
        summary["not_read"] = [(Path(str(r["file"])).name, r["outcome"], r["detail"]) for r in results
                               if r["outcome"] in ("empty", "exception", "killed")]
        summary["heaviest"] = [(Path(str(r["file"])).name, r["seconds"], r["rss_mib"]) for r in
                               sorted(results, key=lambda r: -float(r["rss_mib"]))[:3]]  # type: ignore[arg-type]
        summary["slowest"] = [(Path(str(r["file"])).name, r["seconds"], r["rss_mib"]) for r in
                              sorted(results, key=lambda r: -float(r["seconds"]))[:3]]  # type: ignore[arg-type]
        summary["results"] = results
        summaries.append(summary)
        print(json.dumps({k: v for k, v in summary.items() if k != "results"}), flush=True)
    return summaries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", nargs="?", default="run", choices=("assemble", "run", "child"))
    parser.add_argument("target", nargs="?", default=str(KEPT))
    parser.add_argument("--mirrors", default="/work/.mirror")
    parser.add_argument("--readers", default="bot-docx,bot-xlsx,bot-pdf,bot-html")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the readers run in")
    parser.add_argument("--json", help="where to write the summaries")
    args = parser.parse_args()
    if args.command == "child":
        _child(args.target, [line for line in sys.stdin.read().splitlines() if line])
    elif args.command == "assemble":
        print(f"{assemble(Path(args.target), Path(args.mirrors))} files written to {args.target}")
    else:
        summaries = run(Path(args.target), args.readers.split(","), args.python)
        if args.json:
            Path(args.json).write_text(json.dumps(summaries, indent=1))
        if any(s["exception"] or s["killed"] for s in summaries):
            sys.exit("a reader raised or overran on some file (target: none)")


if __name__ == "__main__":
    main()
