"""Discord's global budget: the pure timing on the virtual clock (order, the rate over a
simulated minute, the share of each process, the lifted mode), then the real discord.py
client against the fake Discord enforcing a low global limit while answers stream."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import aiohttp
import pytest

from bot.edge.budget import (
    BudgetBusy,
    GlobalBudget,
    Priority,
    budget_from_settings,
    counts_against_global,
    process_rate,
)
from bot.settings import SettingsError, load_settings
from tests.support.check_answers import INDICATOR, words_without_fences
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_clock import VirtualClock
from tests.support.fake_discord_server import FakeDiscord, StoredMessage, snowflake
from tests.support.fake_provider_server import ProviderReplayServer, Reply, Trickle


def most_in_any_window(times: list[float], width: float) -> int:
    """The most departures inside any window [t, t + width) (two pointers over sorted times)."""
    times = sorted(times)
    best = start = 0
    for end, t in enumerate(times):
        while times[start] <= t - width:
            start += 1
        best = max(best, end - start + 1)
    return best


# ---- the budget on the virtual clock --------------------------------------------------------
async def test_urgent_requests_go_first_and_interim_edits_never_queue() -> None:
    clock = VirtualClock()
    budget = GlobalBudget(5, clock=clock)
    order: list[str] = []

    async def ask(name: str, priority: Priority, after: float) -> None:
        await clock.sleep(after)
        await budget.acquire(priority)
        order.append(name)

    async def scenario() -> list[float]:
        for _ in range(5):  # the window is full
            await budget.acquire(Priority.URGENT)
        tasks = [asyncio.ensure_future(ask(name, priority, after)) for name, priority, after in (
            ("routine-1", Priority.ROUTINE, 0.1), ("routine-2", Priority.ROUTINE, 0.2),
            ("first-message", Priority.URGENT, 0.3), ("final-edit", Priority.URGENT, 0.4))]
        hints = []
        for _ in range(3):  # interim edits meanwhile: refused at once, never queued
            await clock.sleep(0.5)
            with pytest.raises(BudgetBusy) as busy:
                await budget.acquire(Priority.INTERIM)
            hints.append(busy.value.retry_after)
        await asyncio.gather(*tasks)
        return hints

    hints = await clock.run(scenario())
    assert order == ["first-message", "final-edit", "routine-1", "routine-2"]
    assert all(hint > 0 for hint in hints)
    assert budget.waiting == 0


async def test_an_interim_edit_leaves_the_urgent_share_free() -> None:
    clock = VirtualClock()
    budget = GlobalBudget(50, clock=clock)

    async def scenario() -> tuple[int, int]:
        interim = 0
        while True:
            try:
                budget.try_interim()
            except BudgetBusy:
                break
            interim += 1
        urgent = 0
        while (await budget.acquire(Priority.URGENT)).waited == 0.0:  # no wait: a kept slot
            urgent += 1
        return interim, urgent

    interim, urgent = await clock.run(scenario())
    assert (interim, urgent) == (40, 10)  # 20% of the window is kept for urgent work


async def test_the_rate_holds_over_a_simulated_minute_with_many_askers() -> None:
    """200 tasks asking as fast as they can, all priorities mixed, for 60 virtual seconds."""
    clock = VirtualClock()
    budget = GlobalBudget(50, clock=clock)
    granted: dict[Priority, list[float]] = {p: [] for p in Priority}
    skipped = 0

    async def asker(seed: int) -> None:
        nonlocal skipped
        rng = random.Random(seed)
        while clock.now() < 60.0:
            priority = rng.choice(list(Priority))
            try:
                await budget.acquire(priority)
            except BudgetBusy as busy:
                skipped += 1
                await clock.sleep(busy.retry_after)
                continue
            granted[priority].append(clock.now())
            await clock.sleep(rng.uniform(0.0, 2.0))

    await clock.run(asyncio.gather(*(asker(i) for i in range(200))))
    every = [t for times in granted.values() for t in times]
    assert most_in_any_window(every, 1.0) <= 50
    assert len(every) >= 60 * 45  # the budget is used, not starved (50 per 1.1 s)
    assert granted[Priority.URGENT] and granted[Priority.ROUTINE]
    assert skipped > 0  # interim edits were refused while others waited
    assert len(granted[Priority.URGENT]) > len(granted[Priority.ROUTINE])  # urgent first


async def test_requests_that_leave_late_still_fit_the_window_discord_counts() -> None:
    """Under load a request let go may reach Discord up to a second later (a stalled loop,
    a new connection): counted again from its return, arrivals never exceed the budget."""
    clock = VirtualClock()
    budget = GlobalBudget(50, clock=clock)
    arrivals: list[float] = []

    async def asker(seed: int) -> None:
        rng = random.Random(seed)
        while clock.now() < 30.0:
            departure = await budget.acquire(rng.choice([Priority.URGENT, Priority.ROUTINE]))
            await clock.sleep(rng.choice([0.0, 0.0, 0.05, 0.3, 1.0]))  # on its way to Discord
            arrivals.append(clock.now())
            budget.settle(departure)  # the answer is back
            await clock.sleep(rng.uniform(0.0, 0.5))

    await clock.run(asyncio.gather(*(asker(i) for i in range(100))))
    assert most_in_any_window(arrivals, 1.0) <= 50
    assert len(arrivals) >= 30 * 35  # still most of the budget


async def test_a_cancelled_waiter_gives_up_its_place() -> None:
    clock = VirtualClock()
    budget = GlobalBudget(1, clock=clock)

    async def scenario() -> list[str]:
        await budget.acquire(Priority.URGENT)
        order: list[str] = []

        async def ask(name: str, priority: Priority) -> None:
            await budget.acquire(priority)
            order.append(name)

        first = asyncio.ensure_future(ask("cancelled", Priority.URGENT))
        second = asyncio.ensure_future(ask("routine", Priority.ROUTINE))
        await clock.sleep(0.2)
        first.cancel()
        await second
        return order

    assert await clock.run(scenario()) == ["routine"]
    assert budget.waiting == 0


async def test_a_slow_rate_allows_one_request_per_longer_window() -> None:
    clock = VirtualClock()
    budget = GlobalBudget(0.5, clock=clock)  # 50 per second shared by 100 processes

    async def scenario() -> list[float]:
        times = []
        for _ in range(5):
            await budget.acquire(Priority.ROUTINE)
            times.append(clock.now())
        return times

    times = await clock.run(scenario())
    assert most_in_any_window(times, 2.0) == 1


# ---- settings: the share of each process, the lifted mode, exempt routes --------------------
def test_processes_splitting_the_shards_share_the_budget_by_their_shards() -> None:
    assert process_rate(50, None, []) == 50
    assert process_rate(50, 4, []) == 50  # one process runs every shard
    assert process_rate(50, 4, [0, 1]) == 25
    uneven = [process_rate(50, 3, [0, 1]), process_rate(50, 3, [2])]
    assert sum(uneven) == pytest.approx(50)
    assert process_rate(0, 4, [0]) is None  # lifted: a shared REST proxy enforces it


def settings_with(**env: str):
    return load_settings(_env_file=None, DATABASE_URL="sqlite+aiosqlite:///:memory:", **env)


def test_the_budget_comes_from_the_settings() -> None:
    assert budget_from_settings(settings_with()).capacity == 50
    shared = budget_from_settings(settings_with(SHARD_COUNT="4", SHARD_IDS="2,3", DISCORD_GLOBAL_RATE="120"))
    assert shared.capacity == 60
    proxy = settings_with(DISCORD_GLOBAL_RATE="0", DISCORD_API_BASE_URL="http://rest-proxy:8080/api/v10")
    assert budget_from_settings(proxy) is None
    for bad in ("-1", "10001", "many"):
        with pytest.raises(SettingsError, match="DISCORD_GLOBAL_RATE"):
            settings_with(DISCORD_GLOBAL_RATE=bad)


def test_interactions_the_gateway_and_the_cdn_are_outside_the_budget() -> None:
    base = "https://discord.com/api/v10"
    assert counts_against_global(f"{base}/channels/1/messages", base)
    assert counts_against_global(f"{base}/users/@me", base)
    assert not counts_against_global(f"{base}/interactions/1/tok/callback?with_response=1", base)
    assert not counts_against_global(f"{base}/webhooks/2/tok/messages/@original", base)
    assert not counts_against_global("wss://gateway.discord.gg/?v=10", base)
    assert not counts_against_global("https://cdn.discordapp.com/attachments/1/2/a.png", base)


# ---- the fake Discord's global limit ------------------------------------------------------------
async def test_the_fake_answers_the_global_limit_as_discord_does() -> None:
    async with FakeDiscord(global_limit=2) as fake, aiohttp.ClientSession() as http:
        statuses = []
        for _ in range(3):
            async with http.get(f"{fake.api_url}/users/@me") as resp:
                statuses.append(resp.status)
                headers, body = resp.headers, await resp.json()
        for _ in range(3):  # interaction callbacks are outside the global limit
            async with http.post(f"{fake.api_url}/interactions/1/tok/callback", json={"type": 5}) as resp:
                statuses.append(resp.status)
    assert statuses == [200, 200, 429, 200, 200, 200]
    assert body["global"] is True and 0 < body["retry_after"] <= 1
    assert headers["X-RateLimit-Global"] == "true" and headers["X-RateLimit-Scope"] == "global"
    assert headers["Via"] == "1.1 google" and int(headers["Retry-After"]) >= 1
    assert "X-RateLimit-Bucket" not in headers  # no route bucket was used
    assert len(fake.global_rate_limited) == 1 and fake.rate_limited == fake.global_rate_limited


# ---- the real discord.py client against a fake Discord with a low global limit --------------
CHANNELS = 6
RATE = 5


class ManyChannels(FakeDiscord):
    """The fake Discord with more text channels in its guild (one answer streams in each)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.extra_channels = [snowflake() for _ in range(CHANNELS)]

    def guild_payload(self):
        payload = super().guild_payload()
        payload["channels"] += [self._channel(cid, f"room-{i}", 2 + i) for i, cid in enumerate(self.extra_channels)]
        return payload


def answer_text(fake: FakeDiscord, channel_id: str) -> tuple[list[StoredMessage], str]:
    messages = [m for m in fake.bot_messages(channel_id) if not m.deleted and m.content and not m.embeds]
    return messages, "\n".join(m.content for m in messages)


async def test_answers_streaming_at_once_stay_within_a_low_global_limit(tmp_path: Path) -> None:
    trickle = Trickle(rate=20.0, seconds=3.0)
    async with ManyChannels(global_limit=RATE) as fake, ProviderReplayServer() as server:
        server.reply(Reply(trickle=trickle))
        bot = llmbot_factory(tmp_path)(DISCORD_GLOBAL_RATE=str(RATE), ALLOW_PRIVATE_ENDPOINTS="true",
                                      MAX_ANSWERS_PER_MEMBER=str(CHANNELS))
        async with running_bot(fake, bot) as run:
            await configure_server(bot, fake, server)
            for i, cid in enumerate(fake.extra_channels):
                await fake.send_user_message(f"<@{fake.bot_user['id']}> question {i}", channel_id=cid,
                                             mention_bot=True)

            def all_final() -> bool:
                if len(server.requests) < CHANNELS or any(r.text is None for r in server.requests):
                    return False
                expected = {words_without_fences(r.text) for r in server.requests}
                shown = [answer_text(fake, cid) for cid in fake.extra_channels]
                return all(m and INDICATOR not in text for m, text in shown) and \
                    {words_without_fences(text) for _, text in shown} == expected

            await run.wait_for(all_final, timeout=90)
            await run.wait_for(lambda: len(bot.load.answers) == 0)
    assert fake.global_rate_limited == [] and fake.rate_limited == []
    for cid in fake.extra_channels:  # every final exact, and no edit ever went back to older text
        messages, _ = answer_text(fake, cid)
        for message in messages:
            shown = [content.removesuffix(f" {INDICATOR}") for content in message.history]
            assert all(later.startswith(earlier.rstrip()) for earlier, later in zip(shown, shown[1:], strict=False))
