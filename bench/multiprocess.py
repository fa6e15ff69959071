"""Three shard processes under load: `python -m bot` three times on one PostgreSQL, on 2 cores.

    python bench/multiprocess.py                      # 3 processes x 200 answers, 40 channels a guild
    python bench/multiprocess.py --processes 3 --answers 200 --channels 40 [--seconds 10]
    python bench/multiprocess.py --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test
    python bench/multiprocess.py --profile out.pstats  # cProfile in every bot over the burst

The same run as `bench/load.py`, split across processes: the sharded fake Discord (one
shard per process, a guild on each shard, Discord's identify spacing and global limit of
50 requests/s; `tests/support/fake_discord_shards.py`) in this process; the replay
provider in its own process trickling every answer (30 chunks/s of 3-6 characters for
`--seconds`, each question its own text); `--processes` real bot processes
(SHARD_COUNT = SHARD_PROCESSES = processes, PROCESS_INDEX 0..n-1), all pinned with
`taskset -c 0,1`, on one fresh schema of the PostgreSQL database (TEST_POSTGRES_URL or
`--database-url`; without one the bench says so and stops), answering with the operator's
default provider. Each process answers one warm-up question on its shard first, then
`--answers` members per process mention the bot within two seconds, round-robin over the
guilds and their `--channels` channels. Measured as `bench/load.py` measures one process:
- answers complete and exact (the final message text equals the provider's text);
- Discord 429s (all, and global ones: the processes split the one global budget by
  their shards), requests per second (average, busiest second), typing requests;
- CPU per delivered chunk: utime+stime of all the bot processes from the burst until the
  last answer completed, over the provider chunks delivered; against the floor measured
  in the same run (a bare aiohttp reader reading as many trickled streams in one pinned
  process the way the bots read them, `bench/load.py`'s paced floor, before the bots and
  after them, the mean) and the ratio; beside it, not as the
  target, the floor of `--processes` bare readers splitting the streams at once;
- memory per active answer (the processes' peak RSS minus their idle RSS, summed, over
  the answers), mention -> first message p50/p99, error lines in the logs;
- identifies: invalid sessions (none expected: the processes identify in turn) and the
  closest two identifies of one bucket.
Figures go to bench/results.json under `multiprocess.<n>_processes_<answers>_answers.*`;
the logs are kept at $TMPDIR/bench-multiprocess-<i>.log. `--profile PATH` runs cProfile inside
every bot over the burst (as `bench/load.py --profile`; each writes PATH.<i>) and prints the
top costs of all of them together per chunk. Not run by the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from harness import RESULTS, Figures  # noqa: E402
from load import (  # noqa: E402
    BURST_SECONDS,
    Question,
    RunFigures,
    Scenario,
    answer_figures,
    answers_by_question,
    complete_count,
    cpu_seconds,
    discord_figures,
    floor_figures,
    log_figures,
    measure_floor,
    measure_floors,
    pinned,
    profile_report,
    provider_process,
    report,
    rss_kib,
)

from tests.support.check_answers import INDICATOR  # noqa: E402
from tests.support.drive_shard_processes import stop_processes  # noqa: E402
from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord  # noqa: E402
from tests.support.fake_provider_server import Trickle  # noqa: E402


@dataclass(frozen=True)
class Run:
    processes: int
    answers: int  # per process
    channels: int  # per guild (one guild per process's shard)
    trickle: Trickle
    profile: Path | None = None  # cProfile each bot over the burst into <profile>.<index>

    @property
    def name(self) -> str:
        return f"{self.processes}_processes_{self.answers}_answers"

    @property
    def total(self) -> int:
        return self.processes * self.answers


# ---- the database and the bot processes --------------------------------------------------------
@contextlib.asynccontextmanager
async def fresh_schema(url: str) -> AsyncIterator[str]:
    """A DATABASE_URL on a new schema of `url` (the bots create it), dropped afterwards."""
    from sqlalchemy import text

    from bot.db.engine import create_engine

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{url}?search_path={schema}"
    finally:
        admin = create_engine(url)
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await admin.dispose()


def bot_env(fake: FakeDiscord, provider_url: str, database_url: str, key: str, workdir: Path, run: Run,
            index: int) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(ROOT),
        "DISCORD_TOKEN": BOT_TOKEN, "DISCORD_API_BASE_URL": fake.api_url, "DISCORD_GATEWAY_URL": fake.gateway_url,
        "DATABASE_URL": database_url, "BOT_ENCRYPTION_KEY": key,
        "SHARD_COUNT": str(run.processes), "SHARD_PROCESSES": str(run.processes), "PROCESS_INDEX": str(index),
        # The chat-completions trickle on a hosted chat provider (see bench/load.py).
        "DEFAULT_TEXT_PROVIDER": "openrouter", "DEFAULT_TEXT_MODEL": "trickle",
        "DEFAULT_TEXT_BASE_URL": f"{provider_url}/v1", "DEFAULT_TEXT_API_KEYS": "sk-load",
        "MAX_ANSWERS_PER_MEMBER": "2", "LOG_LEVEL": "WARNING", "DISCORD_GLOBAL_RATE": "50",
    }
    for name in ("PROVIDER_HTTP_TRANSPORT", "EVENT_LOOP"):  # let a bench run try the other choice
        if name in os.environ:
            env[name] = os.environ[name]
    if run.profile is not None:
        env["BOT_PROFILE_PATH"] = str(profile_path(run.profile, index))
    return env


def profile_path(profile: Path, index: int) -> Path:
    return profile.with_name(f"{profile.name}.{index}")


def signal_all(processes: list[Any], signum: int) -> None:
    for process in processes:
        process.send_signal(signum)


@contextlib.asynccontextmanager
async def bot_processes(fake: FakeDiscord, envs: list[dict[str, str]],
                        workdirs: list[Path]) -> AsyncIterator[list[asyncio.subprocess.Process]]:
    """Start every process at once; yield when every shard has a session; SIGINT at the end."""
    processes = []
    for env, workdir in zip(envs, workdirs, strict=True):
        with (workdir / "bot.log").open("wb") as log_file:
            processes.append(await asyncio.create_subprocess_exec(
                *pinned([sys.executable, "-m", "bot"]), cwd=workdir, env=env,
                stdout=log_file, stderr=subprocess.STDOUT))
    try:
        deadline = time.monotonic() + 120
        while fake.ready_shards() != set(range(len(processes))):
            if time.monotonic() > deadline or any(p.returncode is not None for p in processes):
                raise SystemExit(f"the bots did not all connect (shards ready: {sorted(fake.ready_shards())});"
                                 f" their logs are in {workdirs[0].parent}")
            await asyncio.sleep(0.1)
        yield processes
    finally:
        await stop_processes(processes)


# ---- one run ------------------------------------------------------------------------------------
def rooms(fake: FakeDiscord, run: Run) -> list[str]:
    """The burst's channels, guild by guild interleaved: question i goes to rooms[i % len]."""
    per_guild = [fake.text_channels(fake.guild_on_shard(shard))[: run.channels] for shard in range(run.processes)]
    return [per_guild[g][c] for c in range(run.channels) for g in range(run.processes)]


async def warm_up(fake: FakeDiscord, run: Run) -> None:
    """One answer per process on its own shard before the burst (first-use costs paid);
    the first is served the short warm-up answer, the others a normal one."""
    await asyncio.sleep(1.0)  # start-up settles (cogs, command sync)
    mention = f"<@{fake.bot_user['id']}>"
    for shards in ([0], list(range(1, run.processes))):
        asked = [await fake.send_user_message(f"{mention} [warmup] hello", mention_bot=True,
                                              channel_id=fake.text_channels(fake.guild_on_shard(s))[0])
                 for s in shards]
        deadline = time.monotonic() + 90
        while not all((shown := answers_by_question(fake).get(q.id)) and INDICATOR not in shown[-1].content
                      for q in asked):
            if time.monotonic() > deadline:
                raise SystemExit("the bots did not answer their warm-up questions within 90 s")
            await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    fake.requests.clear()


async def burst(fake: FakeDiscord, run: Run) -> list[Question]:
    """`answers x processes` members mention the bot within BURST_SECONDS over every guild's channels."""
    channels = rooms(fake, run)
    questions = []
    start = time.monotonic()
    mention = f"<@{fake.bot_user['id']}>"
    for i in range(run.total):
        await asyncio.sleep(max(0.0, start + i * BURST_SECONDS / run.total - time.monotonic()))
        channel = channels[i % len(channels)]
        asked_at = time.monotonic()
        stored = await fake.send_user_message(f"{mention} [q{i}] tell me something", mention_bot=True,
                                              author=fake.crowd_members[i], channel_id=channel)
        questions.append(Question(f"q{i}", channel, stored.id, asked_at))
    return questions


@dataclass
class Watch:
    pids: list[int]
    peak_rss_kib: int = 0
    last_complete_at: float = 0.0
    cpu_at_last_complete: float = 0.0

    def cpu(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids)

    def rss(self) -> int:
        return sum(rss_kib(pid) for pid in self.pids)


async def wait_for_answers(fake: FakeDiscord, questions: list[Question], served: dict[str, list[str]],
                           watch: Watch, run: Run) -> None:
    """Until every answer is complete, or nothing changed for a while after the streams ended."""
    deadline = time.monotonic() + run.trickle.seconds + 120 + run.total * 0.1
    done, last_change, seen = 0, time.monotonic(), len(fake.requests)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        watch.peak_rss_kib = max(watch.peak_rss_kib, watch.rss())
        now_done = complete_count(fake, questions, served)
        if now_done > done:
            done, watch.last_complete_at, watch.cpu_at_last_complete = now_done, time.monotonic(), watch.cpu()
        if done == len(questions):
            return
        if len(fake.requests) != seen:
            seen, last_change = len(fake.requests), time.monotonic()
        elif time.monotonic() - last_change > 20 + run.trickle.seconds:
            return


async def drive(fake: FakeDiscord, processes: list[Any], run: Run, served: dict[str, list[str]],
                figures: RunFigures) -> None:
    await warm_up(fake, run)
    watch = Watch([p.pid for p in processes])
    idle = watch.peak_rss_kib = watch.rss()
    if run.profile is not None:
        signal_all(processes, signal.SIGUSR1)
    cpu_start, start = watch.cpu(), time.monotonic()
    questions = await burst(fake, run)
    await wait_for_answers(fake, questions, served, watch, run)
    end = watch.last_complete_at or time.monotonic()
    cpu = (watch.cpu_at_last_complete or watch.cpu()) - cpu_start
    if run.profile is not None:
        signal_all(processes, signal.SIGUSR2)
        await asyncio.sleep(1.0)
    chunks = answer_figures(fake, questions, served, figures)
    discord_figures(fake, start, end, figures)
    figures["run_seconds"] = end - start
    figures["bot_cpu_seconds"] = cpu
    figures["cpu_us_per_chunk"] = cpu / max(chunks, 1) * 1e6
    figures["idle_rss_mib"] = idle / 1024
    figures["peak_rss_mib"] = watch.peak_rss_kib / 1024
    figures["memory_kib_per_answer"] = (watch.peak_rss_kib - idle) / run.total


def identify_figures(fake: FakeDiscord, figures: RunFigures) -> None:
    gaps = [gap for bucket in fake.identify_gaps().values() for gap in bucket]
    figures["identifies"] = len(fake.identifies)
    figures["invalid_sessions"] = len(fake.invalid_sessions)
    figures["closest_identifies_s"] = min(gaps, default=float("nan"))


async def run_bench(run: Run, database_url: str) -> tuple[RunFigures, list[str]]:
    from cryptography.fernet import Fernet

    figures = RunFigures()
    with tempfile.TemporaryDirectory(prefix="bench-multiprocess-") as tmp:
        workdirs = [Path(tmp) / f"process-{i}" for i in range(run.processes)]
        for workdir in workdirs:
            workdir.mkdir()
        fake = FakeDiscord(shards=run.processes)
        fake.populate(0, run.total)  # the askers, members of every guild
        for shard in range(run.processes):
            guild = fake.guild_on_shard(shard)
            fake.add_channels(guild, max(0, run.channels - len(fake.text_channels(guild))))
        # The floor before and after the bots: this machine's speed drifts within minutes.
        async with provider_process(run.trickle.seconds) as (url, _):
            floors = await measure_floors(url, run.total)
            split = await measure_split_floor(url, run)
        key = Fernet.generate_key().decode()
        async with fresh_schema(database_url) as db, fake, provider_process(run.trickle.seconds) as (url, served):
            envs = [bot_env(fake, url, db, key, workdir, run, i) for i, workdir in enumerate(workdirs)]
            async with bot_processes(fake, envs, workdirs) as processes:
                await drive(fake, processes, run, served, figures)
            identify_figures(fake, figures)
            logs = []
            for i, workdir in enumerate(workdirs):
                kept = Path(tempfile.gettempdir()) / f"bench-multiprocess-{i}.log"
                shutil.copyfile(workdir / "bot.log", kept)
                logs.append(kept.read_text(errors="replace"))
            print(f"the bots' logs: {Path(tempfile.gettempdir()) / 'bench-multiprocess-<i>.log'}")
            errors = log_figures("\n".join(logs), figures)
            floors.extend(await measure_floors(url, run.total))
    floor_figures(floors, figures)
    figures["split_floor_cpu_us_per_chunk"] = split
    figures["cpu_ratio_to_split_floor"] = figures["cpu_us_per_chunk"] / max(split, 1e-9)
    return figures, errors


async def measure_split_floor(url: str, run: Run) -> float:
    """CPU µs per chunk of as many bare readers as bot processes, each reading its share of
    the streams at once on the same pinned cores: what merely reading the bytes costs when
    the work is split over processes (each wakes its own loop for fewer chunks at a time).
    Reported beside the one-process floor, which the target stays against."""
    shares = await asyncio.gather(*(measure_floor(url, run.answers) for _ in range(run.processes)))
    return sum(cpu for cpu, _ in shares) / max(sum(chunks for _, chunks in shares), 1) * 1e6


async def main(args: argparse.Namespace) -> int:
    if not args.database_url:
        print("multiprocess bench skipped: the shard processes share a PostgreSQL database; set "
              "TEST_POSTGRES_URL or pass --database-url")
        return 0
    run = Run(args.processes, args.answers, args.channels, Trickle(seconds=args.seconds), args.profile)
    figures, errors = await run_bench(run, args.database_url)
    print(f"\n{run.processes} processes (one shard each, one PostgreSQL) x {run.answers} answers; "
          f"identifies {figures['identifies']:.0f}, invalid sessions {figures['invalid_sessions']:.0f}, "
          f"closest two in a bucket {figures['closest_identifies_s']:.2f} s apart")
    report(Scenario(run.total, run.channels * run.processes, trickle=run.trickle), figures, errors)
    print(f"  against {run.processes} bare readers splitting the streams: floor "
          f"{figures['split_floor_cpu_us_per_chunk']:.1f} µs, {figures['cpu_ratio_to_split_floor']:.2f}x "
          f"(beside the target, which is against the one-process floor)")
    out = Figures("multiprocess")
    for key, value in figures.values.items():
        out.add(f"{run.name}.{key}", value)
    print(f"\nfigures written to {out.write(args.results)}")
    if run.profile is not None:
        merged = merge_profiles([profile_path(run.profile, i) for i in range(run.processes)], run.profile)
        if merged is not None:
            profile_report(merged, max(figures["chunks_delivered"], 1))
    return 0


def merge_profiles(paths: list[Path], into: Path) -> Path | None:
    """Every bot's pstats added up into `into` (None when no bot wrote one)."""
    import pstats

    found = [str(path) for path in paths if path.exists()]
    if not found:
        return None
    pstats.Stats(*found).dump_stats(str(into))
    return into


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=3, help="shard processes (one shard each)")
    parser.add_argument("--answers", type=int, default=200, help="answers per process")
    parser.add_argument("--channels", type=int, default=40, help="channels per guild (one guild per shard)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each answer trickles")
    parser.add_argument("--database-url", default=os.environ.get("TEST_POSTGRES_URL"),
                        help="PostgreSQL for the processes (default: TEST_POSTGRES_URL)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--profile", type=Path, help="cProfile every bot over the burst (PATH.<i>, merged into PATH)")
    args = parser.parse_args()
    import uvloop  # the fakes on the faster loop: their cost is not the bots'

    raise SystemExit(uvloop.run(main(args)))
