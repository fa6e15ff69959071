"""Behind a shared REST proxy (DISCORD_REST_PROXY): the proxy's queue seen from answer times
alone (pure, on given times), the soft budget on the virtual clock, then real discord.py
clients streaming answers through a proxy that queues at Discord's global limit: no global
429 reaches the fake Discord, the queue is seen, interim edits are skipped while it lasts,
and finals asked with interim edits reach Discord first."""

from __future__ import annotations

import asyncio
import contextlib
import time
from types import SimpleNamespace
from typing import Any

import discord
import pytest

from bot.edge.budget import BudgetBusy, GlobalBudget, Priority, ProxyBudget, budget_from_settings
from bot.edge.proxy_pressure import ProxyPressure
from bot.edge.sink import DiscordMessageSink
from bot.load.observability import discord_http_trace
from stream.buffer import STREAMING_INDICATOR, MessageDelivery
from tests.support.drive_discord_client import fast_ready_kwargs, running_bot
from tests.support.fake_clock import VirtualClock
from tests.support.fake_discord_server import FakeDiscord, RequestRecord, snowflake
from tests.support.fake_rest_proxy import FakeRestProxy


# ---- the signal: answer times in, busy or calm out -------------------------------------------
def answer(pressure: ProxyPressure, at: float, latency: float) -> float:
    """One request let go at `at` and answered `latency` later; the time it came back."""
    pressure.sent(at)
    pressure.returned(at, at + latency)
    return at + latency


def test_busy_after_four_late_answers_in_a_row_and_calm_after_four_quick_ones() -> None:
    pressure = ProxyPressure()  # margin 0.25 s over the floor, calm below 0.1 s over it
    t = 0.0
    for _ in range(20):  # a quick proxy: the floor is 0.05 s
        t = answer(pressure, t, 0.05)
    assert not pressure.busy(t) and pressure.floor(t) == pytest.approx(0.05)
    for i in range(3):
        t = answer(pressure, t, 0.5)
        assert not pressure.busy(t), f"busy after {i + 1} late answers"
    t = answer(pressure, t, 0.5)
    assert pressure.busy(t) and pressure.spells == 1
    assert pressure.queue_delay(t) == pytest.approx(0.45)
    for _ in range(8):  # between the two levels: still busy (hysteresis)
        t = answer(pressure, t, 0.2)
        assert pressure.busy(t)
    for i in range(4):
        t = answer(pressure, t, 0.08)
        assert pressure.busy(t) == (i < 3)
    for _ in range(8):  # between the levels again, from calm: stays calm
        t = answer(pressure, t, 0.2)
        assert not pressure.busy(t)
    assert pressure.spells == 1


def test_one_slow_request_neither_turns_it_on_nor_keeps_it_on() -> None:
    pressure = ProxyPressure()
    t = 0.0
    for i in range(40):  # an upload (or a route's own bucket) takes 3 s now and then
        t = answer(pressure, t, 3.0 if i % 5 == 0 else 0.05)
        assert not pressure.busy(t)
    pressure.sent(t)  # one slow request still out
    assert not pressure.busy(t + 2.0)


def test_requests_still_out_show_the_queue_before_they_come_back() -> None:
    pressure = ProxyPressure()
    for i in range(10):
        answer(pressure, i * 0.1, 0.02)
    now = 1.0
    for i in range(4):
        pressure.sent(now + i * 0.01)
    assert not pressure.busy(now + 0.2)  # out 0.17 s: not yet late
    assert pressure.busy(now + 0.4)  # four requests out longer than 0.27 s
    for i in range(4):  # they come back, late: still busy
        pressure.returned(now + i * 0.01, now + 1.5)
    assert pressure.busy(now + 1.6)
    # Then nothing for two seconds and nothing out: the queue is gone (no answer needed).
    assert pressure.busy(now + 3.4)
    assert not pressure.busy(now + 3.6)


def test_a_failed_request_says_nothing_and_a_lost_one_is_forgotten() -> None:
    pressure = ProxyPressure()
    for i in range(10):
        answer(pressure, i * 0.1, 0.02)
    for i in range(4):  # refused connections: back at once, no answer
        pressure.sent(1.0 + i)
        pressure.returned(1.0 + i, 1.0 + i, answered=False)
    assert pressure.floor(5.0) == pytest.approx(0.02)
    for i in range(4):  # ends never reported (a request aiohttp lost track of)
        pressure.sent(10.0 + i * 0.01)
    assert pressure.busy(11.0)
    assert not pressure.busy(45.0)  # forgotten after LOST_AFTER: they hold it no longer


def test_the_floor_follows_a_distant_proxy_and_forgets_old_minutes() -> None:
    pressure = ProxyPressure()
    t = 0.0
    for _ in range(8):  # a distant proxy: 0.4 s answers; its margin is the floor itself
        t = answer(pressure, t, 0.4)
    for _ in range(4):  # 0.3 s over the floor: jitter at this distance, not a queue
        t = answer(pressure, t, 0.7)
    assert not pressure.busy(t)
    for _ in range(4):
        t = answer(pressure, t, 0.85)
    assert pressure.busy(t)
    # Eleven minutes later (the proxy moved): answers of 1 s are the new floor, not a queue.
    t += 660.0
    for _ in range(4):
        t = answer(pressure, t, 1.0)
    assert pressure.floor(t) == pytest.approx(1.0) and not pressure.busy(t)


# ---- the soft budget on the virtual clock ---------------------------------------------------
async def test_only_interim_edits_are_refused_while_the_proxy_queues() -> None:
    clock = VirtualClock()
    budget = ProxyBudget(50, clock=clock)

    async def request(priority: Priority, latency: float) -> None:
        departure = await budget.acquire(priority)
        await clock.sleep(latency)
        budget.settle(departure)

    async def scenario() -> tuple[list[float], list[float]]:
        for _ in range(5):
            await request(Priority.ROUTINE, 0.02)
        await request(Priority.INTERIM, 0.02)  # calm: interim edits go
        queued = [asyncio.ensure_future(request(Priority.ROUTINE, 1.5)) for _ in range(4)]
        await clock.sleep(0.5)  # four requests held in the proxy for 0.5 s so far
        hints, waits = [], []
        for _ in range(3):
            with pytest.raises(BudgetBusy) as busy:
                await budget.acquire(Priority.INTERIM)
            hints.append(busy.value.retry_after)
            for priority in (Priority.URGENT, Priority.ROUTINE):  # never held by the signal
                departure = await budget.acquire(priority)
                waits.append(departure.waited)
                budget.settle(departure)
            await clock.sleep(0.1)
        await asyncio.gather(*queued)
        await clock.sleep(2.5)  # a quiet spell: nothing out, nothing back
        budget.try_interim()
        return hints, waits

    hints, waits = await clock.run(scenario())
    assert waits == [0.0] * 6
    assert all(0.4 <= hint <= 1.0 for hint in hints)  # the queue's delay, at most a second
    assert budget.refused == 3 and budget.pressure.spells == 1


async def test_the_soft_budget_still_puts_urgent_work_first() -> None:
    clock = VirtualClock()
    budget = ProxyBudget(5, clock=clock)
    order: list[str] = []

    async def ask(name: str, priority: Priority, after: float) -> None:
        await clock.sleep(after)
        await budget.acquire(priority)
        order.append(name)

    async def scenario() -> None:
        for _ in range(5):
            await budget.acquire(Priority.ROUTINE)
        await asyncio.gather(ask("routine", Priority.ROUTINE, 0.1), ask("final", Priority.URGENT, 0.2))

    await clock.run(scenario())
    assert order == ["final", "routine"]


async def test_interim_edits_fill_what_the_process_share_leaves_spread_over_its_window() -> None:
    """Three processes' answers tick together: interim edits within what each process's
    share (the static split, less the urgent slots) leaves after its own first messages
    and finals, one per gap at most, so all of them together stay under the token's rate
    and never go as a burst; first messages and finals may still use the whole rate."""
    clock = VirtualClock()
    budget = ProxyBudget(10, share=10 / 3, clock=clock)  # 3 slots a second, 1 kept for urgent work
    assert (budget.capacity, budget.interim_share, budget.interim_gap) == (10, 2, 0.5)

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {"at_once": 0}
        for _ in range(5):  # five answers ask their interim edits at one instant: one goes
            with contextlib.suppress(BudgetBusy):
                budget.try_interim()
                seen["at_once"] += 1
        with pytest.raises(BudgetBusy) as spread:
            budget.try_interim()
        seen["gap_hint"] = spread.value.retry_after
        await clock.sleep(spread.value.retry_after)
        budget.try_interim()  # the second of the share's window
        with pytest.raises(BudgetBusy) as full:
            budget.try_interim()
        seen["share_hint"] = full.value.retry_after  # until the first leaves the window
        urgent = [await budget.acquire(Priority.URGENT) for _ in range(8)]  # the whole rate is theirs
        seen["urgent_at_once"] = sum(d.waited == 0 for d in urgent)
        await clock.sleep(1.2)  # every window moved on
        for _ in range(2):  # a process's own finals fill its share...
            await budget.acquire(Priority.URGENT)
        with pytest.raises(BudgetBusy) as own:  # ...and leave no interim edit on top of them
            budget.try_interim()
        seen["after_finals_hint"] = own.value.retry_after
        return seen

    seen = await clock.run(scenario())
    assert seen["at_once"] == 1 and seen["gap_hint"] == pytest.approx(0.5)
    assert seen["share_hint"] == pytest.approx(0.6) and seen["urgent_at_once"] == 8
    assert seen["after_finals_hint"] == pytest.approx(1.1)
    assert budget.refused == 0  # refused by the share and the gap, not by the signal


def settings(**values: Any) -> Any:
    base = {"DISCORD_GLOBAL_RATE": 50, "SHARD_COUNT": 4, "SHARD_IDS": [0],
            "DISCORD_API_BASE_URL": "http://rest-proxy:8080/api/v10", "DISCORD_REST_PROXY": False}
    return SimpleNamespace(**{**base, **values})


def test_behind_a_proxy_each_process_may_use_the_whole_rate() -> None:
    proxied = budget_from_settings(settings(DISCORD_REST_PROXY=True))
    assert isinstance(proxied, ProxyBudget) and proxied.capacity == 50  # not the shard's 12
    assert proxied.interim_share == 10  # interim edits: the shard's 12, less 2 kept for urgent work
    shared = budget_from_settings(settings())  # no proxy: the static share
    assert type(shared) is GlobalBudget and shared.capacity == 12
    assert budget_from_settings(settings(DISCORD_REST_PROXY=True, DISCORD_GLOBAL_RATE=0)) is None


# ---- real discord.py clients behind a queueing proxy -----------------------------------------
RATE = 8  # the token's global limit here: the fake Discord's and the proxy's


class Rooms(FakeDiscord):
    """The fake Discord with `rooms` more text channels in its guild."""

    def __init__(self, rooms: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rooms = [snowflake() for _ in range(rooms)]

    def guild_payload(self) -> dict[str, Any]:
        payload = super().guild_payload()
        payload["channels"] += [self._channel(cid, f"room-{i}", 2 + i) for i, cid in enumerate(self.rooms)]
        return payload


class Process(discord.Client):
    """One bot process: its own HTTP session, trace and soft budget behind the proxy."""

    def __init__(self, budget: GlobalBudget) -> None:
        super().__init__(intents=discord.Intents.default(), http_trace=discord_http_trace(budget),
                         **fast_ready_kwargs())
        self.budget = budget

    def room(self, channel_id: str) -> discord.TextChannel:
        channel = self.get_channel(int(channel_id))
        assert isinstance(channel, discord.TextChannel)
        return channel


@contextlib.asynccontextmanager
async def processes(proxy: FakeRestProxy, *budgets: GlobalBudget):
    """Real clients, each with its own gateway connection to the fake Discord and its own
    HTTP session, every REST request through the proxy (logging in too)."""
    async with contextlib.AsyncExitStack() as stack:
        started = [Process(budget) for budget in budgets]
        for client in started:
            await stack.enter_async_context(running_bot(proxy, client))  # type: ignore[arg-type]
        yield started


class Answer:
    """An answer streaming in one room through the real delivery and sink."""

    def __init__(self, client: Process, channel_id: str) -> None:
        self.channel_id = channel_id
        self.sink = DiscordMessageSink(client.room(channel_id), client=client, typing=True)
        self.delivery = MessageDelivery(self.sink)
        self.words: list[str] = []

    def say(self, word: str) -> None:
        self.words.append(word)
        self.delivery.append(word + " ")

    @property
    def text(self) -> str:
        return " ".join(self.words)

    async def finish(self) -> None:
        await self.delivery.finish()
        self.sink.close()


def edits_of(fake: FakeDiscord, channel_id: str) -> list[RequestRecord]:
    return [r for r in fake.requests if r.method == "PATCH" and r.path.startswith(f"/channels/{channel_id}/")
            and r.status == 200]


def shown(fake: FakeDiscord, answer: Answer) -> list[str]:
    """Every version of the answer's one message, as the fake Discord kept it."""
    (message,) = fake.bot_messages(answer.channel_id)
    return message.history


async def test_processes_streaming_through_the_proxy_skip_interim_edits_while_it_queues() -> None:
    """Three processes, four answers each: together more than the token's rate, each
    within its own; the proxy queues, the processes see it and skip interim edits."""
    async with Rooms(12, global_limit=RATE) as fake, FakeRestProxy(fake, global_limit=RATE) as proxy:
        budgets = [ProxyBudget(RATE) for _ in range(3)]
        async with processes(proxy, *budgets) as clients:
            answers = [Answer(client, cid) for n, client in enumerate(clients)
                       for cid in fake.rooms[n * 4:(n + 1) * 4]]

            async def stream(answer: Answer) -> None:
                for i in range(40):
                    answer.say(f"w{i}")
                    await asyncio.sleep(0.1)
                await answer.finish()

            await asyncio.wait_for(asyncio.gather(*(stream(a) for a in answers)), 60)
    assert fake.global_rate_limited == [] and fake.rate_limited == []
    assert max(r.queued for r in proxy.records) > 0.5  # the proxy held requests
    assert all(budget.pressure.spells >= 1 for budget in budgets)  # every process saw it
    assert sum(budget.refused for budget in budgets) > 0
    assert sum(a.delivery.skipped_edits for a in answers) > 0
    for a in answers:  # every first message and every final went: the full text, last
        assert a.delivery.failure is None
        versions = shown(fake, a)
        assert versions[-1] == a.text and all(v.endswith(STREAMING_INDICATOR) for v in versions[:-1])


@pytest.mark.parametrize("signal", [True, False], ids=["back-pressure", "no-signal"])
async def test_finals_asked_with_interim_edits_reach_discord_before_them(signal: bool) -> None:
    """Another process fills the proxy's queue; this one, with a few requests of its own in
    it, asks interim edits of three answers and, a moment later, the finals of three
    others: the finals reach Discord first, the interim edits once the proxy caught up.
    Without the signal (the control) the interim edits join the queue ahead of the finals."""
    rate = 10
    async with Rooms(6, global_limit=rate) as fake, FakeRestProxy(fake, global_limit=rate) as proxy:
        pressure = ProxyPressure() if signal else ProxyPressure(busy_delay=float("inf"))
        watched, other = ProxyBudget(rate, pressure=pressure), ProxyBudget(rate)
        async with processes(proxy, watched, other) as (client, noisy):
            finishing = [Answer(client, cid) for cid in fake.rooms[:3]]
            streaming = [Answer(client, cid) for cid in fake.rooms[3:]]
            for a in finishing + streaming:
                a.say("opening")
            await fake.wait_for(lambda: all(fake.bot_messages(a.channel_id) for a in finishing + streaming))
            await asyncio.sleep(1.2)  # the soft window is empty again: it refuses nothing below

            async def flood(process: Process, requests: int) -> None:  # routine requests
                rooms = [process.room(cid) for cid in fake.rooms]
                await asyncio.gather(*(rooms[i % 6].typing() for i in range(requests)))

            floods = [asyncio.ensure_future(flood(noisy, 2 * rate))]
            await asyncio.sleep(0.1)
            floods.append(asyncio.ensure_future(flood(client, 4)))  # behind the other's, in the queue
            if signal:
                deadline = time.monotonic() + 10
                while not watched.pressure.busy(time.monotonic()):
                    assert time.monotonic() < deadline, "the proxy's queue was never seen"
                    await asyncio.sleep(0.02)
            else:
                await asyncio.sleep(0.3)
            asked = time.monotonic()
            for a in streaming:  # interim edits asked first...
                a.say("later")
            await asyncio.sleep(0.05)
            for a in finishing:  # ...and the finals a moment later
                a.say("done")
            await asyncio.wait_for(asyncio.gather(*(a.finish() for a in finishing), *floods), 30)
            await fake.wait_for(lambda: all(any("later" in v for v in shown(fake, a)) for a in streaming), 15)
            await asyncio.wait_for(asyncio.gather(*(a.finish() for a in streaming)), 30)
    assert fake.global_rate_limited == [] and fake.rate_limited == []
    finals = [r.at for a in finishing for r in edits_of(fake, a.channel_id) if r.body["content"] == a.text]
    interims = [r.at for a in streaming for r in edits_of(fake, a.channel_id)
                if r.at >= asked and r.body["content"].endswith(STREAMING_INDICATOR)]
    assert len(finals) == 3 and all(shown(fake, a)[-1] == a.text for a in finishing + streaming)
    assert max(r.queued for r in proxy.records) > 0.5
    if signal:
        assert interims and max(finals) < min(interims)  # every final first
        assert watched.refused > 0
    else:  # the control: an interim edit went into the queue and reached Discord first
        assert interims and min(interims) < max(finals)
