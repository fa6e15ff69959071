"""One question with images, through the real bot, in a fresh process that measures what
it costs the others: `python -m tests.capabilities.reading.attachments.decode_scenario <files dir> <out.json>`.

A member in another channel is mid-answer (a trickled stream) when the question with
every file of `<files dir>` arrives. From then until its answer shows, a ticker on the
event loop records how late it wakes (a loop busy decoding wakes it late), and the
process's peak resident memory (`VmHWM`, reset through `/proc/self/clear_refs` at the
start) less its memory at the start is the extra memory. A fresh process, so memory an
earlier test freed but kept cannot hide this one's. Writes the figures as JSON; uses only
what a bot of any version offers (the question path), so it measures old code too; the
route is a custom chat-completions endpoint, which every version speaks the same way.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bot.load.heap import return_large_blocks
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.fake_discord_server import FakeDiscord, UserFile
from tests.support.fake_provider_server import ProviderReplayServer, Reply, Trickle

ANSWER = "I looked at what you sent."
TICK = 0.005


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} missing from /proc/self/status")


def _reset_peak_memory() -> int:
    """Make the peak the current memory (Linux: 5 > clear_refs) and return it."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    return _status_bytes("VmRSS")


def _answer_reply() -> Reply:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "vision-model"}
    return Reply.sse([
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ANSWER},
                              "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ])


class Ticker:
    """Wakes every `TICK` seconds on the loop and keeps its largest lateness."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.ticks = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, loop.time() - before - TICK)
            self.ticks += 1

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def _image_parts(body: Any) -> list[str]:
    content = body["messages"][-1]["content"]
    return [] if isinstance(content, str) else [p["image_url"]["url"] for p in content if p["type"] == "image_url"]


async def measure(files: list[UserFile], workdir: Path) -> dict[str, Any]:
    """The figures of one question with `files` while another answer streams."""
    fake = FakeDiscord()
    fake.populate(channels=1, members=1)
    async with fake, ProviderReplayServer() as server:
        bot = llmbot_factory(workdir, "scenario.sqlite3")(
            ALLOW_PRIVATE_ENDPOINTS="true", DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="vision-model",
            DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-scenario")
        server.enqueue(Reply(trickle=Trickle(rate=20, seconds=4)))
        server.reply(_answer_reply())
        other_channel, other_member = fake.crowd_channels[0], fake.crowd_members[0]
        mention = f"<@{fake.bot_user['id']}>"
        async with running_bot(fake, bot) as run:
            await fake.send_user_message(f"{mention} tell me a long story", author=other_member,
                                         channel_id=other_channel, mention_bot=True)
            await run.wait_for(lambda: bool(fake.bot_messages(other_channel)), timeout=30)
            streaming = fake.bot_messages(other_channel)[0]
            ticker = Ticker()
            ticker.start()
            await asyncio.sleep(0.2)  # the ticker's own start is not the question's
            ticker.worst = 0.0
            start_memory = _reset_peak_memory()
            loop = asyncio.get_running_loop()
            started = loop.time()
            await fake.send_user_message(f"{mention} what are these?", mention_bot=True, files=files)
            await run.wait_for(lambda: any(ANSWER in m.content for m in fake.bot_messages(fake.channel_id)),
                               timeout=120)
            seconds = loop.time() - started
            extra = _status_bytes("VmHWM") - start_memory
            await ticker.stop()
            story = server.requests[0]
            await run.wait_for(lambda: bool(story.text) and streaming.content.strip() == story.text, timeout=60)
    [request] = [r for r in server.requests if "what are these?" in json.dumps(r.json["messages"][-1])]
    notes = [m.content for m in fake.bot_messages(fake.channel_id) if m.content.startswith("-# ")]
    content = request.json["messages"][-1]["content"]
    told = content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)
    return {"stall_ms": ticker.worst * 1000, "ticks": ticker.ticks, "extra_mb": extra / 1_000_000,
            "seconds": seconds, "images_sent": len(_image_parts(request.json)), "notes": notes,
            "model_told": told, "other_answer_streamed_whole": streaming.content.strip() == story.text}


def main() -> None:
    files_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    return_large_blocks()  # as `python -m bot` does before start-up
    files = [UserFile(path.name, path.read_bytes(), "image/webp" if path.suffix == ".webp" else None)
             for path in sorted(files_dir.iterdir())]
    with tempfile.TemporaryDirectory() as workdir:
        figures = asyncio.run(measure(files, Path(workdir)))
    out.write_text(json.dumps(figures))


if __name__ == "__main__":
    main()
