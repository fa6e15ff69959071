"""Hundreds of members asking at once: the real `python -m bot` under load, on 2 cores.

    python bench/load.py                      # 50 and 500 answers over 100 channels, 500 over 500,
                                              # and 500 over 100 with the global budget lifted
    python bench/load.py --answers 500 --channels 100 [--lifted] [--profile out.pstats]
    python bench/load.py --quick              # 20 answers over 4 channels (the test runs this)

One run: the fake Discord (per-channel limits and the global limit, 50 requests/s as
Discord's) in this process; the replay provider in its own process, trickling every
answer as real providers stream (30 chunks/s of 3-6 characters for 10 s, one chunk per
network write; each question gets its own text); the real bot process pinned with
`taskset -c 0,1`, configured only by environment variables, answering with the
operator's default provider. Then `--answers` members mention the bot within two
seconds, spread round-robin over `--channels` channels. Measured:
- answers complete and exact (the final message text equals the provider's text);
- Discord 429s (all, and global ones), requests per second (average, busiest second),
  typing requests;
- bot CPU per delivered chunk: utime+stime of the bot process (/proc/<pid>/stat) from
  the burst until the last answer completed, over the provider chunks delivered;
- memory per active answer: (peak RSS during the run - idle RSS before it) / answers;
- mention -> first message p50/p99 (both times taken here, in the fake Discord);
- error lines in the bot's log;
- the floor, in the same run: a bare aiohttp reader with json.loads per event reading
  as many trickled streams the way the bot reads them (each stream at most once per
  PROVIDER_READ_INTERVAL_MS, its socket held in between, on the bot's event loop), in its
  own pinned process, its CPU taken the same way, once before the bot and once after
  (the mean: this machine's speed drifts within minutes); and the ratio bot/floor. The
  unpaced floor (every event read as it arrives, which does more than the paced bot and
  so floors nothing) is measured beside it as `unpaced_floor_*`, for comparison with
  earlier runs;
- the answering floor, right after the paced floor's second run: the same paced reader
  that also makes the two requests Discord requires of an answer that fits one message
  (its message when the answer starts, the final edit when it ends), through discord.py
  as the bot makes them, with discord.py's per-channel buckets and the least pacing that
  keeps the global budget (`Pacer`). Its ratio to the paced floor is how much of the
  bot's target those requests alone take (`answering_floor_*`, its 429s counted).
The bot answers one short warm-up question before the idle figures are taken, so
first-use costs (imports, SDK models, the shared provider client) are not counted per
answer. Its log is kept at $TMPDIR/bench-load-<run>.log.
Discord's global budget (50 requests/s) means 500 first messages take at least 10 s, so
the first-message target cannot hold at 500 answers with the budget on; the default set
(and `--lifted`) adds the run with the budget lifted (DISCORD_GLOBAL_RATE=0, as behind a
shared REST proxy that enforces it) to show what the budget costs; the fake Discord then
still keeps its route limits, each per channel (or guild) as Discord keeps them.
`--profile PATH` runs cProfile inside the bot over the burst (BOT_PROFILE_PATH, SIGUSR1/SIGUSR2) and prints the top
costs per chunk. Figures go to bench/results.json under `load.<answers>_answers_<channels>_channels[_lifted].*`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from harness import RESULTS, Figures  # noqa: E402

from tests.support.fake_discord_server import BOT_TOKEN, FakeDiscord  # noqa: E402
from tests.support.fake_provider_server import (  # noqa: E402
    ProviderReplayServer,
    Reply,
    Trickle,
    seed_of,
)

CORES = "0,1"
BURST_SECONDS = 2.0
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
ERROR_LINE = re.compile(r"\b(ERROR|CRITICAL)\b|Traceback")
QUESTION_TAG = re.compile(r"\[(q\d+|warmup)\]")
WARMUP = Trickle(seconds=1.0)  # the first request's answer: first-use costs paid before measuring
# The paced floor's default, as the bot's (bot/settings.py); the environment may set both.
READ_INTERVAL_MS = int(os.environ.get("PROVIDER_READ_INTERVAL_MS", "250"))
EVENT_LOOP = os.environ.get("EVENT_LOOP", "uvloop")  # the bot's default loop, or the one set for both
TARGETS = {"cpu_ratio": 1.5, "memory_kib": 256.0, "first_message_p99_s": 2.0}


@dataclass(frozen=True)
class Scenario:
    answers: int
    channels: int
    lifted: bool = False  # the global budget lifted (a shared REST proxy enforces it)
    trickle: Trickle = field(default_factory=Trickle)

    @property
    def name(self) -> str:
        return f"{self.answers}_answers_{self.channels}_channels" + ("_lifted" if self.lifted else "")


# ---- process figures ----------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (its threads included), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def rss_kib(pid: int) -> int:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KIB


def pinned(argv: list[str]) -> list[str]:
    return ["taskset", "-c", CORES, *argv] if shutil.which("taskset") else argv


# ---- the replay provider, in its own process -------------------------------------------------
async def serve_provider(seconds: float) -> None:
    """`--serve-provider`: trickle every answer request; print the port, then one JSON line
    per answer as its stream starts (the question's tag and the answer's pieces). Other
    requests (the bot reading OpenRouter's model list) get the server's 404."""
    trickle = Trickle(seconds=seconds)
    async with ProviderReplayServer() as server:
        server.enqueue(Reply(trickle=WARMUP))
        server.reply(Reply(trickle=trickle))
        print(server.port, flush=True)
        reported = 0
        stdin_closed = asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        while not stdin_closed.done():
            for record in server.requests[reported:]:
                if record.method != "POST":  # the bot reading the model list: not an answer
                    reported += 1
                    continue
                if record.text is None:
                    break
                tag = QUESTION_TAG.search(json.dumps((record.json or {}).get("messages", [None])[-1]))
                pieces = (WARMUP if tag and tag.group(1) == "warmup" else trickle).pieces(seed_of(record.json))
                print(json.dumps({"tag": tag.group(1) if tag else None, "pieces": pieces}), flush=True)
                reported += 1
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def provider_process(seconds: float) -> AsyncIterator[tuple[str, dict[str, list[str]]]]:
    """The replay server's URL, and the pieces of each answer by question tag (filled as served)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve-provider", "--seconds", str(seconds), cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=16 * 1024 * 1024)
    port = int((await process.stdout.readline()).decode())  # type: ignore[union-attr]
    served: dict[str, list[str]] = {}

    async def collect() -> None:
        async for line in process.stdout:  # type: ignore[union-attr]
            record = json.loads(line)
            served[record["tag"]] = record["pieces"]

    collector = asyncio.create_task(collect())
    try:
        yield f"http://127.0.0.1:{port}", served
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        await process.wait()
        collector.cancel()


# ---- the floor: a bare reader in its own process ---------------------------------------------
@dataclass(frozen=True)
class DiscordTarget:
    """Where the answering floor posts: the fake Discord's REST base, the channels the
    answers go to (round-robin, as the burst asks), and the global budget (0: lifted)."""

    api_url: str
    channel_ids: tuple[str, ...]
    global_rate: int

    def argv(self) -> list[str]:
        return ["--discord", self.api_url, "--channel-ids", ",".join(self.channel_ids),
                "--global-rate", str(self.global_rate)]


class Pacer:
    """The least a client must do to keep Discord's global budget: one shared next slot,
    `rate` requests per second (2% spare for the fake's sliding second); 0: no budget."""

    def __init__(self, rate: int) -> None:
        self.gap = 1.02 / rate if rate else 0.0
        self.next_at = 0.0

    async def __call__(self) -> None:
        if not self.gap:
            return
        now = asyncio.get_running_loop().time()
        at = max(now, self.next_at)
        self.next_at = at + self.gap
        if at > now:
            await asyncio.sleep(at - now)


ANSWER_TEXT = "x" * 1350  # an answer's final text in this bench (about 1,350 characters)


async def answering_stream(session: Any, discord_http: Any, pacer: Pacer, url: str, i: int,
                           channel_id: str, interval: float) -> tuple[int, int]:
    """The paced floor's stream and the two requests Discord requires of an answer that
    fits one message, made through discord.py as the bot makes them: a message posted
    when the answer starts, edited to its whole text when it ends."""
    from discord.http import handle_message_parameters
    from discord.utils import MISSING
    from read_path import floor_stream

    await pacer()
    with handle_message_parameters(content="…", nonce=i, message_reference=MISSING) as params:
        posted = await discord_http.send_message(channel_id, params=params)
    counted = await floor_stream(session, url, i, interval)
    await pacer()
    with handle_message_parameters(content=ANSWER_TEXT) as params:
        await discord_http.edit_message(channel_id, posted["id"], params=params)
    return counted


def floor_main(url: str, streams: int, interval_ms: int, discord_target: DiscordTarget | None) -> None:
    """`--floor-reader`: wait for a line on stdin, read `streams` trickled streams (each read
    at most every `interval_ms`, 0: unpaced) on the bot's loop, print the chunks. With
    `discord_target` (the answering floor) each stream also posts and edits its answer."""
    import aiohttp
    import uvloop
    from read_path import floor_stream

    async def run() -> int:
        discord_http = await discord_client(discord_target)
        pacer = Pacer(discord_target.global_rate if discord_target else 0)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            sys.stdin.readline()
            tasks = []
            for i in range(streams):
                if discord_target is None:
                    read = floor_stream(session, url, i, interval_ms / 1000)
                else:
                    channel = discord_target.channel_ids[i % len(discord_target.channel_ids)]
                    read = answering_stream(session, discord_http, pacer, url, i, channel, interval_ms / 1000)
                tasks.append(asyncio.create_task(read))
                await asyncio.sleep(BURST_SECONDS / streams)
            chunks = sum(chunks for chunks, _ in await asyncio.gather(*tasks))
        if discord_http is not None:
            await discord_http.close()
        return chunks

    print(uvloop.run(run()) if EVENT_LOOP == "uvloop" else asyncio.run(run()), flush=True)
    sys.stdin.readline()  # stay alive until the parent has read this process's CPU


async def discord_client(target: DiscordTarget | None) -> Any:
    """discord.py's REST client logged in to the fake Discord (None without a target)."""
    if target is None:
        return None
    import discord

    discord.http.Route.BASE = target.api_url
    discord_http = discord.http.HTTPClient(asyncio.get_running_loop())
    await discord_http.static_login(BOT_TOKEN)
    return discord_http


async def measure_floor(url: str, streams: int, interval_ms: int = READ_INTERVAL_MS,
                        discord_target: DiscordTarget | None = None) -> tuple[float, int]:
    """(CPU seconds, chunks) of the floor reader over its read, taken from /proc; paced at
    the bot's read interval unless `interval_ms` says otherwise (0: unpaced)."""
    extra = discord_target.argv() if discord_target else []
    process = await asyncio.create_subprocess_exec(
        *pinned([sys.executable, __file__, "--floor-reader", "--url", url, "--streams", str(streams),
                 "--interval-ms", str(interval_ms), *extra]),
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    await asyncio.sleep(1.5)  # imports and the session, outside the measured read
    start = cpu_seconds(process.pid)
    process.stdin.write(b"go\n")  # type: ignore[union-attr]
    chunks = int(await process.stdout.readline())  # type: ignore[union-attr]
    cpu = cpu_seconds(process.pid) - start
    process.stdin.write(b"done\n")  # type: ignore[union-attr]
    await process.wait()
    return cpu, chunks


# ---- the bot process -------------------------------------------------------------------------
def bot_env(fake: FakeDiscord, provider_url: str, workdir: Path, scenario: Scenario,
            profile: Path | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(workdir), "PYTHONPATH": str(ROOT),
        "DISCORD_TOKEN": BOT_TOKEN, "DISCORD_API_BASE_URL": fake.api_url,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'bot.sqlite3'}",
        # The chat-completions trickle on a hosted chat provider (the operator's default address
        # may be loopback): the same read path as before OpenAI moved to the Responses API.
        "DEFAULT_TEXT_PROVIDER": "openrouter", "DEFAULT_TEXT_MODEL": "trickle",
        "DEFAULT_TEXT_BASE_URL": f"{provider_url}/v1", "DEFAULT_TEXT_API_KEYS": "sk-load",
        "MAX_ANSWERS_PER_MEMBER": "2", "LOG_LEVEL": "WARNING",
        "DISCORD_GLOBAL_RATE": "0" if scenario.lifted else "50",
    }
    # Let a bench run try the other choice (the floor reads with the same interval and loop).
    for name in ("PROVIDER_HTTP_TRANSPORT", "EVENT_LOOP", "PROVIDER_READ_INTERVAL_MS"):
        if name in os.environ:
            env[name] = os.environ[name]
    if profile is not None:
        env["BOT_PROFILE_PATH"] = str(profile)
    return env


@contextlib.asynccontextmanager
async def bot_process(fake: FakeDiscord, env: dict[str, str], workdir: Path) -> AsyncIterator[Any]:
    log_path = workdir / "bot.log"
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            *pinned([sys.executable, "-m", "bot"]), cwd=workdir, env=env,
            stdout=log_file, stderr=subprocess.STDOUT)
    try:
        await asyncio.wait_for(fake.identified.wait(), 60)
        yield process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


# ---- one run -----------------------------------------------------------------------------------
@dataclass
class Question:
    tag: str
    channel_id: str
    message_id: str
    asked_at: float


@dataclass
class Watch:
    """What the run sampled while it went: the bot's peak RSS, and when answers completed."""

    pid: int
    peak_rss_kib: int = 0
    last_complete_at: float = 0.0
    cpu_at_last_complete: float = 0.0


async def burst(fake: FakeDiscord, scenario: Scenario) -> list[Question]:
    """`answers` members mention the bot within BURST_SECONDS, round-robin over the channels."""
    questions = []
    start = time.monotonic()
    mention = f"<@{fake.bot_user['id']}>"
    for i in range(scenario.answers):
        await asyncio.sleep(max(0.0, start + i * BURST_SECONDS / scenario.answers - time.monotonic()))
        channel = fake.crowd_channels[i % scenario.channels]
        asked_at = time.monotonic()
        stored = await fake.send_user_message(f"{mention} [q{i}] tell me something", mention_bot=True,
                                              author=fake.crowd_members[i], channel_id=channel)
        questions.append(Question(f"q{i}", channel, stored.id, asked_at))
    return questions


def answers_by_question(fake: FakeDiscord) -> dict[str, list[Any]]:
    """The bot's messages replying to each question (an answer here fits one message:
    about 1,350 characters; a split one would count as incomplete)."""
    out: dict[str, list[Any]] = {}
    for message in fake.bot_messages():
        ref = (message.message_reference or {}).get("message_id")
        if ref is not None and not message.deleted:
            out.setdefault(ref, []).append(message)
    return out


def delivered_chunks(pieces: list[str], content: str) -> int:
    """How many of the answer's chunks are on screen: the longest prefix of pieces shown."""
    shown = 0
    position = 0
    for piece in pieces:
        if content.startswith(piece, position):
            position += len(piece)
            shown += 1
        else:
            break
    return shown


def final_text(messages: list[Any] | None) -> str:
    return "".join(m.content for m in messages or [])


def complete_count(fake: FakeDiscord, questions: list[Question], served: dict[str, list[str]]) -> int:
    answers = answers_by_question(fake)
    return sum(1 for q in questions
               if q.tag in served and final_text(answers.get(q.message_id)) == "".join(served[q.tag]))


async def wait_for_answers(fake: FakeDiscord, questions: list[Question], served: dict[str, list[str]],
                           watch: Watch, scenario: Scenario) -> None:
    """Until every answer is complete, or nothing changed for a while after the streams ended."""
    deadline = time.monotonic() + scenario.trickle.seconds + 120 + scenario.answers * 0.1
    done = 0
    last_change = time.monotonic()
    seen_requests = len(fake.requests)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now_done = complete_count(fake, questions, served)
        if now_done > done:
            done = now_done
            watch.last_complete_at = time.monotonic()
            watch.cpu_at_last_complete = cpu_seconds(watch.pid)
        if done == len(questions):
            return
        if len(fake.requests) != seen_requests:
            seen_requests, last_change = len(fake.requests), time.monotonic()
        elif time.monotonic() - last_change > 20 + scenario.trickle.seconds:
            return


async def sample_rss(watch: Watch) -> None:
    while True:
        watch.peak_rss_kib = max(watch.peak_rss_kib, rss_kib(watch.pid))
        await asyncio.sleep(0.05)


@dataclass
class RunFigures:
    """One scenario's figures, named as they go to results.json."""

    values: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, key: str) -> float:
        return self.values[key]

    def __setitem__(self, key: str, value: float) -> None:
        self.values[key] = value


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def discord_figures(fake: FakeDiscord, start: float, end: float, figures: RunFigures) -> None:
    requests = [r for r in fake.requests if start <= r.at <= end]
    per_second = Counter(int(r.at - start) for r in requests)
    figures["discord_requests"] = len(requests)
    figures["discord_rps_avg"] = len(requests) / max(end - start, 1e-9)
    figures["discord_rps_busiest_second"] = max(per_second.values(), default=0)
    figures["discord_429s"] = len(fake.rate_limited)
    figures["discord_global_429s"] = len(getattr(fake, "global_rate_limited", []))
    figures["typing_requests"] = sum(1 for r in requests if r.path.endswith("/typing"))
    figures["typing_429s"] = sum(1 for r in fake.rate_limited if r.path.endswith("/typing"))


def answer_figures(fake: FakeDiscord, questions: list[Question], served: dict[str, list[str]],
                   figures: RunFigures) -> int:
    """Completeness and first-message times; returns the chunks delivered."""
    answers = answers_by_question(fake)
    firsts, complete, chunks = [], 0, 0
    for q in questions:
        messages, pieces = answers.get(q.message_id), served.get(q.tag, [])
        if messages:
            firsts.append(messages[0].created_at - q.asked_at)
        text = final_text(messages)
        complete += bool(pieces) and text == "".join(pieces)
        chunks += delivered_chunks(pieces, text)
    figures["answers"] = len(questions)
    figures["complete"] = complete
    figures["answered_at_all"] = len(firsts)
    figures["first_message_p50_s"] = percentile(firsts, 0.5)
    figures["first_message_p99_s"] = percentile(firsts, 0.99)
    figures["chunks_delivered"] = chunks
    return chunks


def log_figures(log: str, figures: RunFigures) -> list[str]:
    errors = [line for line in log.splitlines() if ERROR_LINE.search(line)]
    figures["error_lines"] = len(errors)
    figures["warning_lines"] = sum(1 for line in log.splitlines() if " WARNING " in line)
    return errors


async def warm_up(fake: FakeDiscord, served: dict[str, list[str]]) -> None:
    """One answer before the burst, so the idle figures are a bot that has answered before
    (imports, SDK models and the shared provider client are made on first use)."""
    await asyncio.sleep(1.0)  # start-up settles (cogs, command sync)
    question = await fake.send_user_message(f"<@{fake.bot_user['id']}> [warmup] hello", mention_bot=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        messages = answers_by_question(fake).get(question.id)
        if "warmup" in served and final_text(messages) == "".join(served["warmup"]):
            await asyncio.sleep(1.0)
            fake.requests.clear()
            return
        await asyncio.sleep(0.1)
    raise SystemExit("the bot did not answer the warm-up question within 60 s")


async def drive(fake: FakeDiscord, process: Any, scenario: Scenario, served: dict[str, list[str]],
                figures: RunFigures, profile: Path | None) -> None:
    """The burst against the running bot, with its CPU, memory and Discord's view measured."""
    await warm_up(fake, served)
    watch = Watch(process.pid)
    idle = watch.peak_rss_kib = rss_kib(process.pid)
    sampler = asyncio.create_task(sample_rss(watch))
    if profile is not None:
        process.send_signal(signal.SIGUSR1)
    cpu_start, start = cpu_seconds(process.pid), time.monotonic()
    questions = await burst(fake, scenario)
    await wait_for_answers(fake, questions, served, watch, scenario)
    end = watch.last_complete_at or time.monotonic()
    cpu = (watch.cpu_at_last_complete or cpu_seconds(process.pid)) - cpu_start
    if profile is not None:
        process.send_signal(signal.SIGUSR2)
        await asyncio.sleep(1.0)
    sampler.cancel()
    chunks = answer_figures(fake, questions, served, figures)
    discord_figures(fake, start, end, figures)
    figures["run_seconds"] = end - start
    figures["bot_cpu_seconds"] = cpu
    figures["cpu_us_per_chunk"] = cpu / max(chunks, 1) * 1e6
    figures["idle_rss_mib"] = idle / 1024
    figures["peak_rss_mib"] = watch.peak_rss_kib / 1024
    figures["memory_kib_per_answer"] = (watch.peak_rss_kib - idle) / scenario.answers


async def run_scenario(scenario: Scenario, profile: Path | None) -> tuple[RunFigures, list[str]]:
    figures = RunFigures()
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        workdir = Path(tmp)
        fake = FakeDiscord(global_limit=None if scenario.lifted else 50)
        # The floor before and after the bot: this machine's speed drifts within minutes.
        # (Before: on a server of its own, as the bot's serves the warm-up answer first.)
        async with provider_process(scenario.trickle.seconds) as (url, _):
            floors = await measure_floors(url, scenario.answers)
        async with fake, provider_process(scenario.trickle.seconds) as (url, served):
            fake.populate(scenario.channels, scenario.answers)
            async with bot_process(fake, bot_env(fake, url, workdir, scenario, profile), workdir) as process:
                await drive(fake, process, scenario, served, figures, profile)
            kept = Path(tempfile.gettempdir()) / f"bench-load-{scenario.name}.log"
            shutil.copyfile(workdir / "bot.log", kept)
            print(f"the bot's log: {kept}")
            errors = log_figures(kept.read_text(errors="replace"), figures)
            floors.extend(await measure_floors(url, scenario.answers))
            limited_before = len(fake.rate_limited)
            answering = await measure_floor(url, scenario.answers, discord_target=DiscordTarget(
                fake.api_url, tuple(fake.crowd_channels[:scenario.channels]), 0 if scenario.lifted else 50))
            figures["answering_floor_429s"] = len(fake.rate_limited) - limited_before
    floor_figures(floors, figures)
    answering_figures(answering, figures)
    return figures, errors


def floor_figures(floors: list[float], figures: RunFigures) -> None:
    """The paced and unpaced floors before and after the bot (`measure_floors` twice), their
    means and the bot's ratio to each."""
    for name, (before, after) in (("floor", floors[0::2]), ("unpaced_floor", floors[1::2])):
        figures[f"{name}_before_cpu_us_per_chunk"], figures[f"{name}_after_cpu_us_per_chunk"] = before, after
        figures[f"{name}_cpu_us_per_chunk"] = (before + after) / 2
        figures[f"cpu_ratio_to_{name}"] = figures["cpu_us_per_chunk"] / max(figures[f"{name}_cpu_us_per_chunk"], 1e-9)


def answering_figures(answering: tuple[float, int], figures: RunFigures) -> None:
    """The answering floor: the paced floor plus the POST and the final PATCH Discord requires
    of each answer, through discord.py at the same global budget, measured right after the
    paced floor's second run; its ratio to that run says how much of the target those two
    requests alone take, before the bot does anything of its own."""
    cpu, chunks = answering
    figures["answering_floor_cpu_us_per_chunk"] = cpu / max(chunks, 1) * 1e6
    figures["answering_floor_ratio_to_floor"] = (figures["answering_floor_cpu_us_per_chunk"]
                                                 / max(figures["floor_after_cpu_us_per_chunk"], 1e-9))
    figures["cpu_ratio_to_answering_floor"] = (figures["cpu_us_per_chunk"]
                                               / max(figures["answering_floor_cpu_us_per_chunk"], 1e-9))


async def measure_floors(url: str, streams: int) -> list[float]:
    """CPU µs per chunk of the paced floor (the bot's read interval), then the unpaced one."""
    floors = [await measure_floor(url, streams, interval) for interval in (READ_INTERVAL_MS, 0)]
    return [cpu / max(chunks, 1) * 1e6 for cpu, chunks in floors]


# ---- the report --------------------------------------------------------------------------------
def verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def report(scenario: Scenario, f: RunFigures, errors: list[str]) -> None:
    budget = "global budget lifted (shared REST proxy)" if scenario.lifted else "global budget 50 requests/s"
    print(f"\n{scenario.answers} answers over {scenario.channels} channels, {budget}; "
          f"run {f['run_seconds']:.1f} s, bot CPU {f['bot_cpu_seconds']:.1f} s")
    rows = [
        ("answers complete and exact", f"{f['complete']:.0f}/{f['answers']:.0f} "
         f"({f['answered_at_all']:.0f} got a message)", f"{scenario.answers}/{scenario.answers}",
         f["complete"] == f["answers"]),
        ("Discord 429s (global, typing)", f"{f['discord_429s']:.0f} ({f['discord_global_429s']:.0f} global,"
         f" {f['typing_429s']:.0f} typing)", "0",
         f["discord_429s"] == 0),
        ("bot CPU per delivered chunk", f"{f['cpu_us_per_chunk']:.1f} µs (paced floor {f['floor_cpu_us_per_chunk']:.1f}"
         f" µs = {f['floor_before_cpu_us_per_chunk']:.0f} before, {f['floor_after_cpu_us_per_chunk']:.0f} after;"
         f" {f['cpu_ratio_to_floor']:.2f}x)", "<= 1.5x floor", f["cpu_ratio_to_floor"] <= TARGETS["cpu_ratio"]),
        ("  against the unpaced reader", f"{f['unpaced_floor_cpu_us_per_chunk']:.1f} µs"
         f" ({f['cpu_ratio_to_unpaced_floor']:.2f}x)", "-", True),
        ("  the floor + Discord's two requests", f"{f['answering_floor_cpu_us_per_chunk']:.1f} µs"
         f" ({f['answering_floor_ratio_to_floor']:.2f}x the paced floor after; bot"
         f" {f['cpu_ratio_to_answering_floor']:.2f}x it; {f['answering_floor_429s']:.0f} 429s)", "-", True),
        ("memory per active answer", f"{f['memory_kib_per_answer']:.0f} KiB (idle {f['idle_rss_mib']:.0f} MiB,"
         f" peak {f['peak_rss_mib']:.0f} MiB)", "<= 256 KiB", f["memory_kib_per_answer"] <= TARGETS["memory_kib"]),
        ("mention -> first message p50 / p99", f"{f['first_message_p50_s']:.2f} / {f['first_message_p99_s']:.2f} s",
         "p99 <= 2 s", f["first_message_p99_s"] <= TARGETS["first_message_p99_s"]),
        ("Discord requests/s avg / busiest", f"{f['discord_rps_avg']:.1f} / {f['discord_rps_busiest_second']:.0f}"
         f" ({f['typing_requests']:.0f} typing)", "<= 50" if not scenario.lifted else "-",
         scenario.lifted or f["discord_rps_busiest_second"] <= 50),
        ("error lines in the bot's log", f"{f['error_lines']:.0f} ({f['warning_lines']:.0f} warnings)", "0",
         f["error_lines"] == 0),
    ]
    for name, value, target, ok in rows:
        print(f"  {name:<36} {value:<58} target {target:<12} {verdict(ok)}")
    for line in errors[:5]:
        print(f"    log: {line[:200]}")


def profile_report(path: Path, chunks: float, top: int = 30) -> None:
    """The bot's own functions by self time, per delivered chunk (cProfile adds its own cost)."""
    import pstats

    stats = pstats.Stats(str(path))
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    print(f"\nprofile (cProfile inside the bot, {total:.1f} s of self time): top {top} by self time per chunk")
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    for (filename, line, function), (_cc, calls, tottime, cumtime, _callers) in rows[:top]:
        where = filename.replace(str(ROOT) + "/", "").split("site-packages/")[-1]
        print(f"  {tottime / chunks * 1e6:7.2f} µs/chunk  {calls / chunks:6.2f} calls/chunk  "
              f"cum {cumtime / chunks * 1e6:7.2f} µs  {where}:{line}({function})")


def scenarios(args: argparse.Namespace) -> list[Scenario]:
    trickle = Trickle(seconds=args.seconds)
    if args.quick:
        return [Scenario(20, 4, trickle=Trickle(seconds=min(args.seconds, 3.0)))]
    if args.answers:
        chosen = [Scenario(args.answers, args.channels, trickle=trickle)]
        if args.lifted:
            chosen.append(Scenario(args.answers, args.channels, lifted=True, trickle=trickle))
        return chosen
    return [Scenario(50, 100, trickle=trickle), Scenario(500, 100, trickle=trickle),
            Scenario(500, 500, trickle=trickle), Scenario(500, 100, lifted=True, trickle=trickle)]


async def main(args: argparse.Namespace) -> int:
    figures = Figures("load")
    failed = False
    for scenario in scenarios(args):
        run, errors = await run_scenario(scenario, args.profile)
        report(scenario, run, errors)
        for key, value in run.values.items():
            figures.add(f"{scenario.name}.{key}", value)
        failed |= run["complete"] != run["answers"]
        if args.profile is not None and args.profile.exists():
            profile_report(args.profile, max(run["chunks_delivered"], 1))
    print(f"\nfigures written to {figures.write(args.results)}")
    return 1 if failed and args.quick else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=0, help="one run with this many answers")
    parser.add_argument("--channels", type=int, default=100, help="with --answers")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each answer trickles")
    parser.add_argument("--lifted", action="store_true", help="with --answers: also with the budget lifted")
    parser.add_argument("--quick", action="store_true", help="20 answers over 4 channels, 3 s each")
    parser.add_argument("--profile", type=Path, help="cProfile the bot over the burst into this file")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--serve-provider", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor-reader", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--streams", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--interval-ms", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--discord", help=argparse.SUPPRESS)
    parser.add_argument("--channel-ids", default="", help=argparse.SUPPRESS)
    parser.add_argument("--global-rate", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    import uvloop  # the fakes on the faster loop: their cost is not the bot's

    if args.serve_provider:
        uvloop.run(serve_provider(args.seconds))
    elif args.floor_reader:
        target = (DiscordTarget(args.discord, tuple(args.channel_ids.split(",")), args.global_rate)
                  if args.discord else None)
        floor_main(args.url, args.streams, args.interval_ms, target)
    else:
        raise SystemExit(uvloop.run(main(args)))
