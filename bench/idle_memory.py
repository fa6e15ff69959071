"""What an idle bot costs in memory: the real `python -m bot`, connected, answering nothing.

    python bench/idle_memory.py

A self-hoster runs the bot on a small machine where most of its life is idle. The run:
the fake Discord (REST and gateway) in this process, the real bot process configured by
environment variables only (SQLite, the operator's default route to a hosted provider),
started, migrated, identified; then left alone for a few seconds while its resident
memory (VmRSS, /proc/<pid>/statm) is sampled; the figure is the largest sample. Nothing
is asked: a provider SDK, a document reader or a page extractor the bot imported at
start-up shows here, and one it imports when a request needs it does not.

Target: at most 140 MiB (it was 215 MiB when every provider SDK and every reader was
imported at start-up). The reader processes (`bot.readers`) are reported apart, summed:
each is an interpreter of its own that imports a reader only with the first document.
Figures go to bench/results.json under `idle.*`; the floor beside
it is a bare Python interpreter's RSS on this machine, for scale.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from harness import RESULTS, Figures, verdict  # noqa: E402
from load import bot_process, rss_kib  # noqa: E402

from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord  # noqa: E402

TARGET_MIB = 140.0
SETTLE_SECONDS = 3.0  # after identifying: start-up work (migrations, command sync, caches) ends
SAMPLE_SECONDS = 5.0
SAMPLES = 20


def bot_env(fake: FakeDiscord, workdir: Path) -> dict[str, str]:
    """A whole operator configuration: a database, a default route with its key."""
    return {
        "PATH": "/usr/bin:/bin", "HOME": str(workdir), "PYTHONPATH": str(ROOT),
        "DISCORD_TOKEN": BOT_TOKEN, "DISCORD_API_BASE_URL": fake.api_url,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'bot.sqlite3'}",
        "DEFAULT_TEXT_PROVIDER": "anthropic", "DEFAULT_TEXT_MODEL": "claude-sonnet-4-5",
        "DEFAULT_TEXT_API_KEYS": "sk-ant-idle", "LOG_LEVEL": "WARNING",
    }


def bare_interpreter_mib() -> float:
    """A bare `python -c pass`'s peak RSS on this machine, for scale."""
    out = subprocess.run([sys.executable, "-c", "import resource; print(resource.getrusage("
                          "resource.RUSAGE_SELF).ru_maxrss)"], capture_output=True, text=True, check=True)
    return int(out.stdout) / 1024


def reader_pids(parent: int) -> list[int]:
    """The reader processes (`bot.readers`) the bot started."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(") ", 1)[1].split()[1])
            if ppid == parent and b"bot.readers.child" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


async def idle_rss_mib() -> tuple[float, float]:
    """The bot's largest RSS sample while it idles, connected; and its idle reader
    processes' (counted apart: each is its own interpreter), summed."""
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as tmp:
        workdir = Path(tmp)
        fake = FakeDiscord()
        async with fake, bot_process(fake, bot_env(fake, workdir), workdir) as process:
            await asyncio.sleep(SETTLE_SECONDS)
            peak = readers = 0
            for _ in range(SAMPLES):
                peak = max(peak, rss_kib(process.pid))
                readers = max(readers, sum(rss_kib(pid) for pid in reader_pids(process.pid)))
                await asyncio.sleep(SAMPLE_SECONDS / SAMPLES)
    return peak / 1024, readers / 1024


async def main(results: Path) -> int:
    figures = Figures("idle")
    bot_mib, readers_mib = await idle_rss_mib()
    idle = figures.add("bot.rss_mib", bot_mib)
    readers = figures.add("readers.rss_mib", readers_mib)
    bare = figures.add("bare_python.rss_mib", bare_interpreter_mib())
    figures.add("bot.target_mib", TARGET_MIB)
    print(f"idle bot RSS {idle:.1f} MiB ({verdict(idle / TARGET_MIB, 1.0)} the <= {TARGET_MIB:g} MiB target); "
          f"a bare interpreter {bare:.1f} MiB; its idle reader processes {readers:.1f} MiB in all")
    print(f"figures written to {figures.write(results)}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    raise SystemExit(asyncio.run(main(parser.parse_args().results)))
