"""One question, one context, through the real LLMBot against the fake Discord and the
replay provider: the answer is registered from admission on, limits are counted where
the server pays and checked before anything is shown, one deadline spans the whole
answer, a reply to any part of an answer continues all of it at once, and a question
reads the configuration once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bot.load.config_cache import ConfigCache
from bot.repo.usage import take_message
from providers.i18n import t
from tests.support.check_answers import INDICATOR
from tests.support.data_errors import anthropic_error
from tests.support.data_openai import chunk, openai_stream, tool_delta
from tests.support.drive_commands import command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_personal, configure_server
from tests.support.fake_discord_server import FakeDiscord, StoredMessage, UserFile, snowflake
from tests.support.fake_provider_server import ProviderReplayServer, Reply

CREATE_PUBLIC_THREADS = 1 << 35


async def ask(fake: FakeDiscord, text: str, **options: Any) -> StoredMessage:
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, **options)


def lines(fake: FakeDiscord, channel_id: str | None = None) -> list[str]:
    """What the bot wrote in channels (replies to slash commands left out)."""
    return [m.content for m in fake.bot_messages(channel_id) if m.content and not m.deleted
            and m.webhook_token is None]


def finished(fake: FakeDiscord, text: str) -> int:
    return sum(1 for m in fake.bot_messages() if m.content == text and not m.deleted)


class ManyChannels(FakeDiscord):
    """The fake Discord with eight more text channels (a member asking in several at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.more_channels = [snowflake() for _ in range(8)]

    def guild_payload(self) -> dict[str, Any]:
        payload = super().guild_payload()
        payload["channels"] += [self._channel(cid, f"room-{n}", 3 + n) for n, cid in enumerate(self.more_channels)]
        return payload


async def test_questions_with_files_count_against_the_member_cap_while_they_are_prepared(
        provider_server: ProviderReplayServer, turn_bot) -> None:
    """8 questions with a small file each from one member in 8 channels, at most 2 answers
    at once: 2 answers and 6 refusals (the files' downloads no longer hide an answer from
    the cap; before, all 8 were answered at once)."""
    server = provider_server
    server.reply(openai_stream("Read your file.", piece=3, event_delay=0.05))
    bot = turn_bot(MAX_ANSWERS_PER_MEMBER="2")
    async with ManyChannels() as fake, running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        for number, channel in enumerate(fake.more_channels):
            await ask(fake, f"what is in file {number}?", channel_id=channel,
                      files=[UserFile(f"notes{number}.txt", b"a small file")])
        busy = discord_text(fake, "chat.member_busy", "en", count=2)
        await run.wait_for(lambda: finished(fake, "Read your file.") == 2 and lines(fake).count(busy) == 6)
        await asyncio.sleep(0.3)
    assert lines(fake).count(busy) == 6
    assert finished(fake, "Read your file.") == 2
    assert len(server.requests) == 2


async def test_a_failing_personal_key_does_not_let_the_servers_keys_answer_uncounted(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    """The member's own key fails, the server's keys answer as its fallback: those answers
    count. Six questions at a limit of 2 per hour: 2 answers and the limit line."""
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(anthropic_error(401, "authentication_error", "invalid x-api-key"), key="sk-ant-bogus-0000")
    server.reply(openai_stream("Paid by the server."), key="sk-pool-first")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await configure_personal(bot, fake, "sk-ant-bogus-0000", server_fallback=True)
        await command(run, fake, "limits", sub("set", opt("messages_per_hour", 2)))
        for number in range(6):
            await ask(fake, f"again {number}")  # one at a time: a newer question would stop the one streaming
            if number < 2:
                await run.wait_for(lambda n=number: finished(fake, "Paid by the server.") == n + 1)
            await asyncio.sleep(0.5)
        limit = "You have reached this server's limit of 2"
        await run.wait_for(lambda: any(line.startswith(limit) for line in lines(fake)), timeout=15)
        await asyncio.sleep(1.0)  # a second limit line would have come by now
    paid = [r for r in server.requests if r.api_key == "sk-pool-first"]
    assert len(paid) == 2
    assert finished(fake, "Paid by the server.") == 2
    limit_lines = [line for line in lines(fake) if line.startswith(limit)]
    assert len(limit_lines) == 1  # said once: later refusals are throttled like the access refusal


async def test_mentions_over_a_limit_open_no_thread(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Threads on, the member's hour already full: six mentions open no thread and the
    limit is said once (before: six public threads, each with its own limit line)."""
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("never asked"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await command(run, fake, "settings", sub("threads", opt("enabled", True)))
        await command(run, fake, "limits", sub("set", opt("messages_per_hour", 1)))
        hour = time.gmtime()
        from datetime import UTC, datetime
        async with bot.sessions() as session, session.begin():
            now = datetime(*hour[:4], tzinfo=UTC)
            await take_message(session, int(fake.guild_id), int(fake.member_user["id"]), now, 1)
        for number in range(6):
            await ask(fake, f"question {number}")
        await run.wait_for(lambda: len(lines(fake)) >= 1)
        await asyncio.sleep(1.0)
    assert fake.count("POST", r"/threads$") == 0
    assert len(lines(fake)) == 1 and lines(fake)[0].startswith("You have reached this server's limit of 1")
    assert server.requests == []


async def test_no_thread_for_an_asker_who_may_not_open_one(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """The bot may open threads, the asker may not (a channel overwrite): the answer stays
    in the channel instead of opening a public thread on the member's behalf."""
    fake, server = fake_discord, provider_server
    fake.channel_overwrites[fake.channel_id] = [{"id": fake.member_user["id"], "type": 1, "allow": "0",
                                                 "deny": str(CREATE_PUBLIC_THREADS)}]
    server.reply(openai_stream("In the channel.", piece=5))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await command(run, fake, "settings", sub("threads", opt("enabled", True)))
        await ask(fake, "where?")
        await run.wait_for(lambda: finished(fake, "In the channel.") == 1)
    assert fake.count("POST", r"/threads$") == 0
    assert "In the channel." in lines(fake, fake.channel_id)


def _deadline_note() -> str:
    return f"*{t('chat.answer_deadline', 'en', duration='5 seconds')}*"


async def seconds_to_the_deadline_note(fake: FakeDiscord, server: ProviderReplayServer, turn_bot,
                                       question: str) -> float:
    """Ask under a 5 s deadline; how long until the answer said it reached it."""
    bot = turn_bot(ANSWER_DEADLINE_SECONDS="5")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        started = time.monotonic()
        await ask(fake, question)
        await run.wait_for(lambda: any(_deadline_note() in line for line in lines(fake)), timeout=15)
        return time.monotonic() - started


async def test_a_retried_answer_ends_at_one_deadline(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """The first key fails after 3 s, the second streams slowly: the answer ends 5 s after
    its turn began (before: the retry got a fresh 5 s), with the deadline note."""
    fake, server = fake_discord, provider_server
    server.reply(Reply.error(503, {"error": {"message": "overloaded", "type": "server_error"}},
                             first_byte_delay=3.0), key="sk-pool-first")
    server.reply(openai_stream("slow " * 60, piece=5, event_delay=0.2), key="sk-pool-second")
    took = await seconds_to_the_deadline_note(fake, server, turn_bot, "take your time")
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-pool-second"]
    assert 4.5 <= took <= 6.5, took


async def test_a_deadline_before_any_text_says_so(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Both keys hold the stream open without content: the answer ends at its 5 s with a
    note naming the limit (before: it ended and the channel stayed silent)."""
    fake, server = fake_discord, provider_server
    for key in ("sk-pool-first", "sk-pool-second"):
        server.reply(openai_stream("too late", first_byte_delay=30.0), key=key)
    took = await seconds_to_the_deadline_note(fake, server, turn_bot, "anyone there?")
    assert 4.5 <= took <= 6.5, took
    assert [line for line in lines(fake) if line] == [_deadline_note()]


def _dice_call() -> Reply:
    events = [chunk({"role": "assistant", "content": None, "tool_calls": [
        tool_delta(0, id="call_1", name="roll_dice", arguments='{"notation": "1d6"}')]}),
        chunk({}, finish="tool_calls")]
    return Reply.sse(events, first_byte_delay=3.0)


async def test_a_tool_loop_ends_at_one_deadline(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """A tool round after 3 s, then a slow answer: the whole answer ends at its 5 s."""
    fake, server = fake_discord, provider_server
    server.enqueue(_dice_call(), openai_stream("rolling " * 60, piece=5, event_delay=0.2))
    took = await seconds_to_the_deadline_note(fake, server, turn_bot, "roll a die and talk about it")
    assert len(server.requests) == 2
    assert 4.5 <= took <= 6.5, took


PART = "word " * 360  # 1,800 characters: four parts make an answer Discord shows as four messages


def _four_parts(event_delay: float) -> Reply:
    return openai_stream(PART * 4, piece=600, event_delay=event_delay)


def _assistant_turns(request) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "assistant"]


async def test_a_reply_to_a_part_right_after_the_answer_carries_the_whole_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(_four_parts(0.0), openai_stream("About part three."))
    bot = turn_bot(DATABASE_WRITE_BATCH_MS="5000")  # the record is written long after the reply
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "a long answer please")
        await run.wait_for(lambda: len(lines(fake)) >= 4 and not any(INDICATOR in x for x in lines(fake)))
        await asyncio.sleep(0.05)
        part3 = [m for m in fake.bot_messages() if m.content and not m.deleted][2]
        await fake.send_user_message("what about this part?", reply_to=part3.id, mention_bot=True)
        await run.wait_for(lambda: finished(fake, "About part three.") == 1)
    [turn] = _assistant_turns(server.requests[1])
    assert " ".join(turn.split()) == " ".join((PART * 4).split())


async def test_a_reply_to_a_part_while_the_answer_streams_carries_the_whole_answer_so_far(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(_four_parts(0.6), openai_stream("About part three."))
    bot = turn_bot(DATABASE_WRITE_BATCH_MS="5000")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "a long answer please")
        await run.wait_for(lambda: len(lines(fake)) >= 4, timeout=20)  # part 4 is streaming
        part3 = [m for m in fake.bot_messages() if m.content and not m.deleted][2]
        await fake.send_user_message("what about this part?", reply_to=part3.id, mention_bot=True)
        await run.wait_for(lambda: finished(fake, "About part three.") == 1, timeout=20)
    [turn] = _assistant_turns(server.requests[1])
    shown = " ".join(turn.split())
    assert shown.startswith(" ".join((PART * 3).split()))  # parts 1 to 3 whole, as one assistant turn
    assert INDICATOR not in turn


async def test_a_question_reads_the_configuration_once(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Counted.", piece=4))
    reads: list[str] = []
    original_server, original_personal = ConfigCache.server, ConfigCache.personal

    async def counted_server(self, guild_id):
        reads.append("server")
        return await original_server(self, guild_id)

    async def counted_personal(self, user_id, guild_id):
        reads.append("personal")
        return await original_personal(self, user_id, guild_id)

    monkeypatch.setattr(ConfigCache, "server", counted_server)
    monkeypatch.setattr(ConfigCache, "personal", counted_personal)
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await command(run, fake, "settings", sub("threads", opt("enabled", False)))
        reads.clear()
        await ask(fake, "how often do you read?")
        await run.wait_for(lambda: finished(fake, "Counted.") == 1)
        await asyncio.sleep(0.3)  # the bookkeeping after the answer reads nothing either
    assert reads == ["server", "personal"]
