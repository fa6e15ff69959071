"""Three `python -m bot` processes behind one shared REST proxy (DISCORD_REST_PROXY), one
shard each, on one PostgreSQL database.

The proxy (`tests/support/fake_rest_proxy.py`) queues what is over the token's global
limit, as nirn-proxy does, in front of the sharded fake Discord. Members in all three
guilds ask at once for more Discord requests than the token may send (answers streaming in
two waves, so some finish while others stream). Each process keeps its priority budget as
a soft limit at the whole rate and reads the proxy's queue from its own answer times.

Shown against the control, the same run with the budget lifted (DISCORD_GLOBAL_RATE=0, the
way to run behind a proxy before this mode: every request joins the proxy's queue in
arrival order):
- no 429 of any kind reaches Discord, in either run (the proxy holds the hard limit);
- every answer complete and exact;
- finals before interim edits: no final waits behind an interim edit in the proxy's
  queue (the processes keep interim edits within what their shares leave, spread over
  the share's window, and skip them while the proxy queues), where the control's finals
  wait behind several each; a final reaches Discord sooner after its answer's stream
  ended, with fewer interim edits sent.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet

from tests.support.check_answers import INDICATOR
from tests.support.drive_shard_processes import (
    answered,
    ask,
    postgres_database_url,
    shard_processes,
)
from tests.support.fake_discord_server import FakeDiscord, StoredMessage
from tests.support.fake_provider_server import ProviderReplayServer, RecordedRequest, Reply, Trickle
from tests.support.fake_rest_proxy import FakeRestProxy, ProxyRecord

SHARDS = 3
RATE = 10  # the token's global limit here: the fake Discord's and the proxy's
ROOMS = 6  # answers in each guild: three in the first wave, three in the second
WAVE_GAP = 2.5  # seconds between the waves: the first finishes while the second streams
STREAM = Trickle(rate=10.0, seconds=5.0, form="responses")  # each answer: 50 chunks over five seconds (OpenAI)


@dataclass
class Final:
    """One answer's final text at the proxy: when its stream ended, when the final arrived
    at the proxy and reached Discord, and the interim edits queued ahead of it."""

    ended: float
    arrived: float
    reached: float
    held: bool  # it waited in the proxy's queue for the global limit
    interims_ahead: int

    @property
    def wait(self) -> float:
        """Seconds from the end of the answer's stream to its final text at Discord."""
        return self.reached - self.ended


@dataclass
class RunFigures:
    answers: int
    complete: int
    rate_limited: int
    global_rate_limited: int
    most_queued: float  # the longest any request waited inside the proxy
    interims: int  # interim edits that reached Discord
    finals: list[Final]

    @property
    def interims_ahead(self) -> int:
        return sum(f.interims_ahead for f in self.finals)

    @property
    def median_wait(self) -> float:
        return statistics.median(f.wait for f in self.finals)

    def line(self) -> str:
        return (f"{self.complete}/{self.answers} complete, 429s {self.rate_limited} "
                f"(global {self.global_rate_limited}), longest proxy wait {self.most_queued:.2f} s, "
                f"{self.interims} interim edits, {sum(f.held for f in self.finals)} of the {len(self.finals)} finals "
                f"waited in the proxy's queue, interim edits ahead of them {self.interims_ahead}, final after stream end: median {self.median_wait:.2f} s, "
                f"max {max(f.wait for f in self.finals):.2f} s")


def is_message_text(record: ProxyRecord) -> bool:
    """A send or an edit of a message in a guild channel (the answers' requests)."""
    return record.content is not None and record.path.startswith("/channels/") and record.status == 200


def finals_of(records: list[ProxyRecord], streams: dict[str, RecordedRequest]) -> list[Final]:
    """Per answer text (`streams`: its provider request by its text), the request that
    carried it whole, and the interim edits ahead of it in the proxy's queue: when the
    final waited for the global limit, those that arrived before it and had not left when
    it arrived. (A final that never waited was held back by nothing; an interim edit the
    proxy was still reading when the final came did not delay it.)"""
    interims = [r for r in records if is_message_text(r) and r.content.endswith(INDICATOR)]  # type: ignore[union-attr]
    finals = []
    for record in records:
        stream = streams.get(record.content or "") if is_message_text(record) else None
        if stream is None or stream.ended is None:
            continue
        ahead = sum(1 for i in interims if i.arrived < record.arrived < i.left) if record.held else 0
        finals.append(Final(stream.ended, record.arrived, record.back, record.held, ahead))
    return finals


async def run_behind_the_proxy(server: ProviderReplayServer, tmp_path: Path, budget: str) -> RunFigures:
    """Both waves through three processes behind the proxy, DISCORD_GLOBAL_RATE=`budget`."""
    async with postgres_database_url() as database_url, \
            FakeDiscord(shards=SHARDS, max_concurrency=SHARDS, global_limit=RATE) as fake, \
            FakeRestProxy(fake, global_limit=RATE) as proxy:
        guilds = [fake.guild_on_shard(shard) for shard in range(SHARDS)]
        fake.populate(0, SHARDS * ROOMS)  # the askers, members of every guild
        for guild in guilds:
            fake.add_channels(guild, ROOMS + 1 - len(fake.text_channels(guild)))
        shared = {"DATABASE_URL": database_url, "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode(),
                  "DEFAULT_TEXT_PROVIDER": "openai", "DEFAULT_TEXT_MODEL": "env-model",
                  "DEFAULT_TEXT_BASE_URL": f"{server.url}/v1", "DEFAULT_TEXT_API_KEYS": "sk-env",
                  "ALLOW_PRIVATE_ENDPOINTS": "true", "DISCORD_REST_PROXY": "true",
                  "DISCORD_GLOBAL_RATE": budget}
        server.reply(Reply(trickle=STREAM))
        async with shard_processes(fake, shared, tmp_path / f"budget-{budget}", api_url=proxy.api_url) as run:
            await run.wait_for(lambda: fake.ready_shards() == set(range(SHARDS)) and bool(fake.commands), timeout=60)
            rooms = [[room for guild in guilds for room in fake.text_channels(guild)[1 + wave * 3:4 + wave * 3]]
                     for wave in range(2)]
            questions: dict[str, StoredMessage] = {}
            first_asked = time.monotonic()
            for wave, wave_rooms in enumerate(rooms):
                await asyncio.sleep(max(0.0, first_asked + wave * WAVE_GAP - time.monotonic()))
                for room in wave_rooms:
                    tag = f"w{wave}-{len(questions)}"
                    questions[tag] = await ask(fake, room, tag, author=fake.crowd_members[len(questions)])

            def streams() -> dict[str, RecordedRequest]:
                return {tag: r for tag in questions for r in server.requests
                        if r.text is not None and f"[{tag}]" in json.dumps(r.json["input"][-1])}

            def complete() -> int:
                served = streams()
                return sum(1 for tag, q in questions.items() if tag in served
                           and answered(fake, q, served[tag].text or ""))

            await run.wait_for(lambda: complete() == len(questions), timeout=90)
            codes = [p.returncode for p in run.processes]
        assert codes == [None] * SHARDS, run.log()
        assert "Traceback" not in run.log(), run.log()
    by_text = {r.text: r for r in streams().values() if r.text}
    interims = [r for r in fake.requests if r.method == "PATCH" and r.status == 200
                and (r.body or {}).get("content", "").endswith(INDICATOR)]
    return RunFigures(len(questions), complete(), len(fake.rate_limited), len(fake.global_rate_limited),
                      max(r.queued for r in proxy.records), len(interims), finals_of(proxy.records, by_text))


async def test_behind_a_shared_proxy_finals_reach_discord_before_interim_edits(
        provider_server: ProviderReplayServer, tmp_path: Path) -> None:
    proxied = await run_behind_the_proxy(provider_server, tmp_path, str(RATE))
    lifted = await run_behind_the_proxy(provider_server, tmp_path, "0")
    print(f"\nproxy mode: {proxied.line()}\nbudget lifted (control): {lifted.line()}")
    for figures in (proxied, lifted):
        assert figures.complete == figures.answers == SHARDS * ROOMS
        assert (figures.rate_limited, figures.global_rate_limited) == (0, 0)
        assert len(figures.finals) == figures.answers
    # Both runs met a queue: the control filled it for over a second; in proxy mode the
    # processes keep it short by skipping interim edits (the better they do, the shorter it
    # is), so what shows it was met there is finals that had to wait in it.
    assert lifted.most_queued > 1.0, "the control never filled the proxy's queue"
    assert sum(f.held for f in proxied.finals) >= 2, "no final met the proxy's queue"
    # The control: interim edits asked before a final wait in the queue ahead of it.
    assert lifted.interims_ahead >= lifted.answers
    # Proxy mode: the processes saw the queue and skipped interim edits while it lasted.
    assert proxied.interims < lifted.interims
    # Proxy mode: no final waits behind an interim edit.
    assert proxied.interims_ahead == 0, [f.interims_ahead for f in proxied.finals]
    assert proxied.median_wait < lifted.median_wait
