"""Memory through the real bot (the fake Discord, the replay provider): a member turns it
on, the model saves a fact through `remember` and the answer's note line says so; a later
question recalls it in another channel of the server and in a DM, never in another
server and never for another member; memory off offers no tool, reads nothing and points
to `/memory on` when asked to remember; the bounds (500 characters, 100 memories) are
said in the note; and the database work a question costs is counted."""

from __future__ import annotations

import asyncio
import json

from bot.capabilities.memory.recall import MEMORIES_HEADER
from bot.capabilities.memory.storage import MAX_MEMORIES, add_memory, set_memory
from bot.capabilities.memory.tool import REMEMBER_TOOL
from bot.db.models_memory import FACT_LENGTH
from providers.i18n import t
from tests.capabilities.memory.asking_the_bot import (
    ask,
    operator_bot,
    remember_call,
    shown,
    system_of,
    tool_names,
)
from tests.support.check_database_work import counted
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command, member, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


async def test_saved_through_the_tool_and_recalled_in_another_channel_and_a_dm(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    [other_channel] = fake.add_channels(fake.guild_id, 1)
    server.enqueue(remember_call("I am vegan"), openai_stream("Noted, you are vegan."),
                   openai_stream("Try the lentil curry."), openai_stream("Still vegan food, then."))
    bot = operator_bot(turn_bot, server)
    async with running_bot(fake, bot) as run:
        await bot.config.poll()
        on = await command(run, fake, "memory", sub("on"))
        assert on.ephemeral and on.content.startswith("Memory is on.")
        await ask(run, fake, "remember that I am vegan", 1)
        await run.wait_for(lambda: "-# remembered" in shown(fake, fake.channel_id)[0])
        await ask(run, fake, "what should I cook?", 1, channel_id=other_channel)
        await ask(run, fake, "and for dinner?", 1, dm=True)
    first, tool_result, other, dm = (r.json for r in server.requests)
    assert REMEMBER_TOOL in tool_names(first)
    [result] = [m["content"] for m in tool_result["messages"] if m["role"] == "tool"]
    assert "Saved to the asker's memory" in result
    [answer] = shown(fake, fake.channel_id)
    assert answer.endswith(f"-# {t('chat.memory.remembered', 'en', fact='I am vegan')}")
    for body in (other, dm):
        system = system_of(body)
        assert f"{MEMORIES_HEADER}\n- I am vegan" in system
        assert system.index(MEMORIES_HEADER) > 0  # after the persona, which comes first
    assert fake.rate_limited == []


async def test_never_recalled_for_another_member_or_in_another_server(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    elsewhere = fake.add_guild(0)
    bob = member(fake, "bob")
    server.enqueue(*(openai_stream(f"Answer {n}.") for n in range(3)))
    bot = operator_bot(turn_bot, server)
    alice = int(fake.member_user["id"])
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await set_memory(session, alice, True)
            await add_memory(session, alice, int(fake.guild_id), "Alice's cat is Tama")
        await bot.config.poll()
        await ask(run, fake, "what is my cat called?", 1, author=bob)
        await ask(run, fake, "what is my cat called?", 1, channel_id=elsewhere.channels[0])
        await ask(run, fake, "what is my cat called?", 2)
    bobs, other_server, alices = (r.json for r in server.requests)
    assert "Tama" not in json.dumps(bobs) and REMEMBER_TOOL not in tool_names(bobs)
    assert "Tama" not in json.dumps(other_server) and REMEMBER_TOOL in tool_names(other_server)
    assert "- Alice's cat is Tama" in system_of(alices)


async def test_memory_off_offers_no_tool_reads_nothing_and_points_to_memory_on(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("I will try."), openai_stream("In Japanese."), openai_stream("Sure."))
    bot = operator_bot(turn_bot, server)
    pointer = f"-# {t('chat.memory.pointer', 'en')}"  # the server's language
    async with running_bot(fake, bot) as run:
        await bot.config.poll()
        with counted(bot.engine) as work:
            await ask(run, fake, "please remember that my birthday is in May", 1)
            await ask(run, fake, "誕生日は5月だと覚えておいて", 2)
            await run.wait_for(lambda: [a.endswith(pointer) for a in shown(fake, fake.channel_id)] == [True, True])
            await ask(run, fake, "do you remember the film we talked about?", 3)
            await asyncio.sleep(0.5)  # a note would have come by now
    assert not [s for s in work.statements if "memor" in s.lower()]  # never opted in: no read
    assert all(REMEMBER_TOOL not in tool_names(r.json) for r in server.requests)
    assert shown(fake, fake.channel_id)[2] == "Sure."  # a question about the past: no pointer


async def test_memory_on_costs_no_read_from_the_cache_and_one_on_a_miss(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(*(openai_stream(f"Answer {n}.") for n in range(3)))
    bot = operator_bot(turn_bot, server)
    alice = int(fake.member_user["id"])
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await set_memory(session, alice, True)
            await add_memory(session, alice, int(fake.guild_id), "prefers short answers")
        await bot.config.poll()
        with counted(bot.engine) as miss:
            await ask(run, fake, "first", 1)
        with counted(bot.engine) as hit:
            await ask(run, fake, "second", 2)
    memory_reads = [[s for s in work.statements if "memor" in s.lower()] for work in (miss, hit)]
    assert [len(reads) for reads in memory_reads] == [1, 0], memory_reads
    assert [s for s in hit.statements if s.startswith("SELECT")] == []  # the whole question reads nothing
    assert all("- prefers short answers" in system_of(r.json) for r in server.requests[:2])


async def test_a_long_fact_is_cut_and_the_oldest_dropped_with_a_note(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    long_fact = "I collect " + "stamps and " * 60
    server.enqueue(remember_call(long_fact), openai_stream("Saved, though shortened."))
    bot = operator_bot(turn_bot, server)
    alice = int(fake.member_user["id"])
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await set_memory(session, alice, True)
            for n in range(MAX_MEMORIES):
                await add_memory(session, alice, int(fake.guild_id), f"old fact {n}")
        await bot.config.poll()
        await ask(run, fake, "remember my hobby", 1)
        await run.wait_for(lambda: "-# your oldest" in shown(fake, fake.channel_id)[0])
        listed = await command(run, fake, "memory", sub("list"))
    [result] = [m["content"] for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert "was cut" in result and "the oldest was dropped" in result
    [answer] = shown(fake, fake.channel_id)
    note = answer.rsplit("\n\n", 1)[1].split("\n")
    assert note[0].startswith(f"-# remembered, cut to {FACT_LENGTH} characters: I collect stamps")
    assert note[0].endswith("…")
    assert note[1] == f"-# {t('chat.memory.oldest_dropped', 'en', limit=MAX_MEMORIES)}"
    assert "old fact 0 " not in listed.content and "1. old fact 1 —" in listed.content
