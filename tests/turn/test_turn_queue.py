"""Admission (MAX_CONCURRENT_ANSWERS): waiting turns keep their place in arrival order,
a waiting member sees "typing…" once, and a waiting turn is stoppable and released at
shutdown. The queue alone first (plain asyncio), then inside the real bot (discord.py
against the fake Discord, the replay provider)."""

from __future__ import annotations

import asyncio

from bot.load.turn_queue import TurnQueue
from providers.i18n import t
from stream.interrupt import Interrupt
from tests.support.check_answers import INDICATOR, plain_answer_messages
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command, member
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer

SLOW = " ".join(f"word{i}" for i in range(400))


async def settle(queue: TurnQueue, waiting: int) -> None:
    """Let the tasks run until `waiting` of them stand in line."""
    for _ in range(100):
        if queue.waiting == waiting:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{queue.waiting} waiting, expected {waiting}")


async def test_waiting_turns_run_in_arrival_order_and_a_newcomer_never_jumps_the_line() -> None:
    queue = TurnQueue(limit=2)
    order: list[str] = []
    holders = [asyncio.Event(), asyncio.Event()]

    async def turn(name: str, hold: asyncio.Event | None = None) -> None:
        async with queue.turn(Interrupt()) as admitted:
            assert admitted
            order.append(name)
            if hold is not None:
                await hold.wait()

    running = [asyncio.create_task(turn(f"holder{i}", holders[i])) for i in range(2)]
    await settle(queue, 0)
    waiters = [asyncio.create_task(turn(f"w{i}")) for i in range(6)]
    await settle(queue, 6)
    holders[0].set()
    await running[0]
    late = asyncio.create_task(turn("late"))  # a slot is being handed over right now
    await asyncio.gather(*waiters, late)
    holders[1].set()
    await running[1]
    assert order == ["holder0", "holder1", "w0", "w1", "w2", "w3", "w4", "w5", "late"]
    assert (queue.running, queue.waiting) == (0, 0)


async def test_an_interrupted_waiter_leaves_the_line_and_its_slot_goes_on() -> None:
    queue = TurnQueue(limit=1)
    order: list[str] = []
    release = asyncio.Event()
    stops = {name: Interrupt() for name in ("a", "b", "c")}
    typing: list[str] = []

    async def turn(name: str) -> bool:
        async def typing_once() -> None:
            typing.append(name)

        async with queue.turn(stops[name], typing_once) as admitted:
            if admitted:
                order.append(name)
                if name == "a":
                    await release.wait()
            return admitted

    tasks = [asyncio.create_task(turn(name)) for name in ("a", "b", "c")]
    await settle(queue, 2)
    stops["b"].fire("stop")
    await settle(queue, 1)
    release.set()
    assert await asyncio.gather(*tasks) == [True, False, True]
    assert order == ["a", "c"] and typing == ["b", "c"]  # typing once, only for those who waited
    assert queue.running == 0


async def test_a_slot_and_an_interrupt_arriving_together_pass_the_slot_on() -> None:
    queue = TurnQueue(limit=1)
    release = asyncio.Event()
    stop_b = Interrupt()

    async def holder() -> None:
        async with queue.turn(Interrupt()):
            await release.wait()

    async def waiter(interrupt: Interrupt) -> bool:
        async with queue.turn(interrupt) as admitted:
            return admitted

    first = asyncio.create_task(holder())
    await settle(queue, 0)
    b, c = asyncio.create_task(waiter(stop_b)), asyncio.create_task(waiter(Interrupt()))
    await settle(queue, 2)
    release.set()
    stop_b.fire("follow_up")  # in the same loop turn as the hand-over to b
    await first
    assert await asyncio.gather(b, c) == [False, True]
    assert queue.running == 0


async def test_a_follow_up_to_a_waiting_question_keeps_its_place() -> None:
    queue = TurnQueue(limit=1)
    order: list[str] = []
    release = asyncio.Event()
    first_question = Interrupt()

    async def turn(name: str, key: object, interrupt: Interrupt | None = None) -> bool:
        async with queue.turn(interrupt or Interrupt(), key=key) as admitted:
            if admitted:
                order.append(name)
                if name == "holder":
                    await release.wait()
            return admitted

    holder = asyncio.create_task(turn("holder", "someone"))
    await settle(queue, 0)
    asked = asyncio.create_task(turn("alice asks", ("channel", "alice"), first_question))
    bob = asyncio.create_task(turn("bob asks", ("channel", "bob")))
    await settle(queue, 2)

    async def follow_up() -> bool:  # as the chat cog does: interrupt, then enter, in one step
        first_question.fire("follow_up")
        return await turn("alice follows up", ("channel", "alice"))

    follow_up_task = asyncio.create_task(follow_up())
    await settle(queue, 2)
    release.set()
    assert await asyncio.gather(holder, asked, bob, follow_up_task) == [True, False, True, True]
    assert order == ["holder", "alice follows up", "bob asks"]
    assert (queue.running, queue.waiting) == (0, 0)


async def ask(fake: FakeDiscord, text: str, author=None):
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, author=author)


def answered(fake: FakeDiscord, text: str) -> bool:
    return any(m.content == text for m in plain_answer_messages(fake))


def streaming(fake: FakeDiscord) -> bool:
    shown = plain_answer_messages(fake)
    return bool(shown) and "word20" in shown[0].content


async def test_queued_members_see_typing_once_and_get_their_answers_in_order(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream(SLOW, piece=10, event_delay=0.02),
                   openai_stream("Bob's answer, in full.", piece=5), openai_stream("Carol's answer, in full.", piece=5))
    bob, carol = member(fake, "bob"), member(fake, "carol")
    bot = turn_bot(MAX_CONCURRENT_ANSWERS="1")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "count slowly")
        await run.wait_for(lambda: streaming(fake))
        before = len(fake.typing)
        await ask(fake, "bob asks", author=bob)
        await ask(fake, "carol asks", author=carol)
        await run.wait_for(lambda: bot.turns.waiting == 2 and len(fake.typing) == before + 2)
        await asyncio.sleep(0.5)  # long enough for a refresh loop to show itself
        queued_typing = len(fake.typing) - before
        assert len(server.requests) == 1  # nobody waiting was sent to the provider yet
        await command(run, fake, "stop", permissions="0")  # alice's answer ends: the line moves
        await run.wait_for(lambda: answered(fake, "Bob's answer, in full.")
                           and answered(fake, "Carol's answer, in full."))
    assert queued_typing == 2  # one typing request per waiting member, not a stream of them
    asked = [r.json["messages"][-1]["content"] for r in server.requests]
    assert [next(w for w in ("count", "bob", "carol") if w in str(c)) for c in asked] == ["count", "bob", "carol"]
    assert INDICATOR not in plain_answer_messages(fake)[0].content


async def test_stop_reaches_a_queued_turn_and_shutdown_releases_the_rest(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream(SLOW, piece=10, event_delay=0.02))
    bob, carol = member(fake, "bob"), member(fake, "carol")
    bot = turn_bot(MAX_CONCURRENT_ANSWERS="1")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "count slowly")
        await run.wait_for(lambda: streaming(fake))
        bobs = await ask(fake, "bob asks", author=bob)
        await ask(fake, "carol asks", author=carol)
        await run.wait_for(lambda: bot.turns.waiting == 2)
        stopped = await command(run, fake, "stop", permissions="0", user=bob)
        await run.wait_for(lambda: bot.turns.waiting == 1)
        await bot.answers.close(5.0)  # shutdown: alice's answer ends, carol's wait is released
        await run.wait_for(lambda: sum(m.content == t("chat.bot_restarting", "en")
                                       for m in plain_answer_messages(fake)) == 1)
        await run.wait_for(lambda: bot.turns.running == 0)  # alice's turn ends after its bookkeeping
    link = f"https://discord.com/channels/{fake.guild_id}/{fake.channel_id}/{bobs.id}"
    assert stopped.content == t("commands.stop.stopped", "en", question=link)
    assert len(server.requests) == 1  # neither waiting turn reached the provider
    assert (bot.turns.running, bot.turns.waiting) == (0, 0)
