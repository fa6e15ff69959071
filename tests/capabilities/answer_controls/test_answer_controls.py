"""The buttons under an answer, back-to-back messages and listen channels, through the real
LLMBot against the fake Discord (button presses are type-3 interactions on the message the
button is on) and the replay provider: Stop, Regenerate, Continue, Reasoning, a press
after a restart, three quick messages as one question, and a channel that listens.

Every test ends with no Discord 429 at all."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from bot.capabilities.listening.settings import LISTENING
from bot.capabilities.listening.storage import set_listen_channel
from bot.db.models import AnswerRecord
from bot.repo.capability_settings import set_values
from providers.i18n import t
from tests.support.check_answers import INDICATOR
from tests.support.data_openai import openai_events, openai_stream
from tests.support.drive_commands import command, member, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord, StoredMessage
from tests.support.fake_provider_server import ProviderReplayServer, Reply

MANAGE_MESSAGES = str(1 << 13)


async def ask(fake: FakeDiscord, text: str, **options: Any) -> StoredMessage:
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, **options)


@contextlib.asynccontextmanager
async def answering(fake: FakeDiscord, server: ProviderReplayServer,
                    turn_bot: Callable[[], Any]) -> AsyncIterator[tuple[Any, Any]]:
    """A new bot process running against the fake Discord, its server set up to answer
    from the replay provider: (the bot, its run)."""
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        yield bot, run


def button(fake: FakeDiscord, action: str, question: StoredMessage, asker: dict[str, Any] | None = None) -> str:
    return f"ans:{action}:{(asker or fake.member_user)['id']}:{question.id}"


def answer_parts(fake: FakeDiscord) -> list[StoredMessage]:
    """The bot's visible channel messages (not ephemeral, not deleted, not command replies)."""
    return [m for m in fake.bot_messages(ephemeral=False) if not m.deleted and m.webhook_token is None]


def carrying(fake: FakeDiscord, custom_id: str) -> StoredMessage | None:
    return next((m for m in fake.bot_messages() if not m.deleted and custom_id in m.custom_ids), None)


def ephemeral_texts(fake: FakeDiscord) -> list[str]:
    return [m.content for m in fake.bot_messages(ephemeral=True)]


def no_429s(fake: FakeDiscord) -> None:
    assert fake.rate_limited == [], [r.path for r in fake.rate_limited]


def request_texts(request: Any) -> list[str]:
    """The request's messages as role: text (string or text parts)."""
    out = []
    for message in request.json["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        out.append(f"{message['role']}: {content}")
    return out


async def test_stop_button_ends_a_streaming_answer_only_for_the_asker_or_a_manager(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("word " * 300, piece=5, event_delay=0.05))  # about 15 s of streaming
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "talk for a while")
        stop = button(fake, "stop", question)
        await run.wait_for(lambda: carrying(fake, stop) is not None)
        part = carrying(fake, stop)
        assert part is not None and part.content.endswith(INDICATOR)
        await fake.press(part.id, stop, user=member(fake, "mallory"))  # neither the asker nor a manager
        only = t("chat.controls.only_asker_stop", "en")
        await run.wait_for(lambda: only in ephemeral_texts(fake))
        await asyncio.sleep(0.3)
        assert carrying(fake, stop) is not None  # still streaming
        await fake.press(part.id, stop, user=fake.owner, permissions=MANAGE_MESSAGES)
        pressed = time.monotonic()
        await run.wait_for(lambda: not any(m.content.endswith(INDICATOR) for m in answer_parts(fake)), timeout=5)
        took = time.monotonic() - pressed
        await asyncio.sleep(0.3)
    assert took < 1.0
    last = answer_parts(fake)[-1]
    assert last.content.endswith(f"*{t('chat.answer_stopped', 'en')}*")
    assert stop not in last.custom_ids and button(fake, "regen", question) in last.custom_ids
    assert all(stop not in m.custom_ids for m in answer_parts(fake))
    no_429s(fake)


async def test_the_asker_stops_their_own_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("word " * 300, piece=5, event_delay=0.05))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "talk for a while")
        stop = button(fake, "stop", question)
        await run.wait_for(lambda: carrying(fake, stop) is not None)
        counted = fake.global_counted
        await fake.press(carrying(fake, stop).id, stop)
        await run.wait_for(lambda: not any(m.content.endswith(INDICATOR) for m in answer_parts(fake)), timeout=1.5)
        await asyncio.sleep(0.3)
    assert fake.interaction_requests >= 1
    assert fake.global_counted - counted <= 2  # the final edit (and its note), never the press's answer
    assert not ephemeral_texts(fake)
    no_429s(fake)


async def test_regenerate_edits_the_answer_in_place_and_a_reply_continues_the_new_version(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """A two-part answer regenerated into a one-part one: the first message edited in place,
    the surplus part deleted, the same request messages sent again, and a reply to the new
    version carries its text."""
    fake, server = fake_discord, provider_server
    first = ("Old paragraph. " * 90).strip()  # about 1,350 characters
    server.enqueue(openai_stream(first + "\n\n" + first, piece=200), openai_stream("The new version."),
                   openai_stream("Following up."))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "tell me twice")
        regen = button(fake, "regen", question)
        await run.wait_for(lambda: carrying(fake, regen) is not None)
        old_parts = answer_parts(fake)
        assert len(old_parts) == 2 and regen in old_parts[-1].custom_ids and regen not in old_parts[0].custom_ids
        await fake.press(old_parts[-1].id, regen, user=member(fake, "mallory"))
        await run.wait_for(lambda: t("chat.controls.only_asker", "en") in ephemeral_texts(fake))
        await fake.press(old_parts[-1].id, regen)
        await run.wait_for(lambda: old_parts[0].content == "The new version.")
        await asyncio.sleep(0.5)
        assert old_parts[1].deleted  # the surplus part went
        assert [m.id for m in answer_parts(fake)] == [old_parts[0].id]
        assert regen in old_parts[0].custom_ids  # the new last message carries the buttons
        await fake.send_user_message("and then?", reply_to=old_parts[0].id)
        await run.wait_for(lambda: any(m.content == "Following up." for m in answer_parts(fake)))
    original, again, follow = server.requests[:3]
    assert len(again.json["messages"]) == len(original.json["messages"])
    assert request_texts(again) == request_texts(original)
    assert "assistant: The new version." in request_texts(follow)
    assert not any(first[:50] in text for text in request_texts(follow))
    no_429s(fake)


async def test_continue_after_a_length_finish_appends_to_the_same_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(Reply.sse(openai_events(["The list: one, two,"], finish="length")),
                   openai_stream(" three, four."))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "count")
        cont = button(fake, "cont", question)
        await run.wait_for(lambda: carrying(fake, cont) is not None)
        part = carrying(fake, cont)
        assert button(fake, "regen", question) in part.custom_ids
        await fake.press(part.id, cont)
        await run.wait_for(lambda: part.content == "The list: one, two, three, four.")
        await asyncio.sleep(0.3)
    assert [m.id for m in answer_parts(fake)] == [part.id]  # appended, not a new answer
    assert cont not in part.custom_ids  # this time the answer ended by itself
    texts = request_texts(server.requests[1])
    assert texts[-2] == "assistant: The list: one, two,"
    assert texts[-1].startswith("user: ") and "continue" in texts[-1].lower()
    assert texts[:-2] == request_texts(server.requests[0])
    no_429s(fake)


async def test_reasoning_is_ephemeral_and_costs_no_global_slot(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Forty-two.", reasoning=["Six times seven ", "is forty-two."]))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "six times seven?")
        why = button(fake, "why", question)
        await run.wait_for(lambda: carrying(fake, why) is not None)
        await asyncio.sleep(0.5)
        visible, counted = len(answer_parts(fake)), fake.global_counted
        await fake.press(carrying(fake, why).id, why, user=member(fake, "bob"))  # anyone who reads the channel
        await run.wait_for(lambda: any("Six times seven" in text for text in ephemeral_texts(fake)))
        await asyncio.sleep(0.3)
    assert len(answer_parts(fake)) == visible  # nothing new in the channel
    assert fake.global_counted == counted  # the reply to a press is an interaction: no global slot
    no_429s(fake)


async def test_a_press_after_a_restart_still_works(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Before the restart."), openai_stream("After the restart."))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "anything")
        regen = button(fake, "regen", question)
        await run.wait_for(lambda: carrying(fake, regen) is not None)
        await asyncio.sleep(0.5)  # the answer's record is written behind
    part = carrying(fake, regen)
    assert part is not None and part.content == "Before the restart."
    again = turn_bot()  # a new process on the same database
    async with running_bot(fake, again) as run:
        await fake.press(part.id, regen)
        await run.wait_for(lambda: part.content == "After the restart.")
    assert len(server.requests) == 2
    no_429s(fake)


async def test_three_quick_messages_are_one_question(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Messages at 0, 0.5 and 1 s while the provider is slow to start: one answer, to a
    request with the three texts in order, replying to the last; nothing else shown."""
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("One answer to all three.", first_byte_delay=2.0))
    async with answering(fake, server, turn_bot) as (bot, run):
        messages = []
        for text in ("first part", "second part", "third part"):
            messages.append(await ask(fake, text))
            await asyncio.sleep(0.5)
        await run.wait_for(lambda: any(m.content == "One answer to all three." for m in answer_parts(fake)),
                           timeout=10)
        await asyncio.sleep(1.0)
    assert [m.content for m in answer_parts(fake)] == ["One answer to all three."]
    assert answer_parts(fake)[0].message_reference["message_id"] == messages[-1].id
    last = request_texts(server.requests[-1])[-1]
    assert last.index("first part") < last.index("second part") < last.index("third part")
    no_429s(fake)


async def test_the_askers_quick_follow_ups_join_without_a_mention_and_others_do_not(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Only the first message mentions the bot; the asker's next two, 0.5 s apart and before
    the answer shows, are part of the question (before: the request held only the first).
    Another member's message in between is not."""
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Rain in Lisbon tomorrow.", first_byte_delay=2.0))
    async with answering(fake, server, turn_bot) as (bot, run):
        first = await ask(fake, "I have a question about the weather,")
        await asyncio.sleep(0.5)
        await fake.send_user_message("what do you think?", author=fake.owner)  # someone else, no mention
        second = await fake.send_user_message("specifically about rain tomorrow")
        await asyncio.sleep(0.5)
        third = await fake.send_user_message("in Lisbon, please.")
        await run.wait_for(lambda: any(m.content == "Rain in Lisbon tomorrow." for m in answer_parts(fake)),
                           timeout=10)
        await asyncio.sleep(1.0)
    assert [m.content for m in answer_parts(fake)] == ["Rain in Lisbon tomorrow."]  # one answer, to all three
    asked = request_texts(server.requests[-1])[-1]
    assert asked.index("about the weather") < asked.index("rain tomorrow") < asked.index("Lisbon")
    assert "what do you think" not in " ".join(request_texts(server.requests[-1]))
    assert answer_parts(fake)[0].message_reference["message_id"] == third.id
    assert first.id != second.id


async def first_text_seconds(fake: FakeDiscord, run: Any, text: str) -> float:
    before = {m.id for m in fake.bot_messages()}
    asked = time.monotonic()
    await ask(fake, text)
    await run.wait_for(lambda: any(m.id not in before and m.content for m in answer_parts(fake)))
    seconds = time.monotonic() - asked
    await run.wait_for(lambda: not any(m.content.endswith(INDICATOR) for m in answer_parts(fake)))
    await asyncio.sleep(0.2)
    return seconds


async def test_a_single_question_waits_for_nothing(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """The first text of a lone question comes as fast with batching on (2 s) as off (0)."""
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Quick.", first_byte_delay=0.2))
    async with answering(fake, server, turn_bot) as (bot, run):
        batched = [await first_text_seconds(fake, run, f"question {n}") for n in range(3)]
        async with bot.sessions() as session, session.begin():
            await set_values(session, int(fake.guild_id), LISTENING, {"batch_seconds": 0})
        await asyncio.sleep(0.2)
        unbatched = [await first_text_seconds(fake, run, f"question {n}") for n in range(3, 6)]
    assert statistics.median(batched) <= statistics.median(unbatched) + 0.25, (batched, unbatched)
    assert statistics.median(batched) < 1.5
    no_429s(fake)


async def test_a_listen_channel_answers_without_mentions_and_keeps_its_gap(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Heard you."))
    bot = turn_bot()
    bob = member(fake, "bob")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        async with bot.sessions() as session, session.begin():
            await set_listen_channel(session, int(fake.guild_id), int(fake.channel_id), 2.0)
        await asyncio.sleep(0.3)
        await fake.send_user_message("// just between us")  # an aside: not for the bot
        await fake.send_user_message("a bot says hi", author={**member(fake, "otherbot"), "bot": True})
        await asyncio.sleep(1.0)
        assert answer_parts(fake) == []
        await fake.send_user_message("what do you think?")  # no mention
        await fake.send_user_message("and me?", author=bob)
        await run.wait_for(lambda: len([m for m in answer_parts(fake) if m.content == "Heard you."]) == 2,
                           timeout=10)
    first, second = answer_parts(fake)
    assert second.created_at - first.created_at >= 1.8  # the channel's gap of 2 s between answers
    history = request_texts(server.requests[-1])
    assert any("what do you think?" in text for text in history[:-1])  # the channel is the history
    no_429s(fake)


async def test_batch_seconds_and_listen_channels_are_commands(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Set through the slash commands, seen by the next question: /settings batch-seconds 0
    makes two quick messages two questions."""
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Answer.", first_byte_delay=1.0))
    async with answering(fake, server, turn_bot) as (bot, run):
        await command(run, fake, "settings", sub("batch-seconds", opt("seconds", 0)))
        await ask(fake, "one")
        await asyncio.sleep(0.3)
        await ask(fake, "two")
        await run.wait_for(lambda: any(m.content == "Answer." for m in answer_parts(fake)), timeout=10)
        await asyncio.sleep(0.5)
    assert len(server.requests) == 2
    assert "two" in request_texts(server.requests[1])[-1] and "one" not in request_texts(server.requests[1])[-1]
    no_429s(fake)


async def test_a_message_after_the_answer_shows_interrupts_it_and_its_history_holds_both(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Once text shows, a new message is not merged: it interrupts the answer, and the new
    request's history holds the interrupted question and the partial answer."""
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Partial words " * 100, piece=14, event_delay=0.1), openai_stream("Second."))
    async with answering(fake, server, turn_bot) as (bot, run):
        await ask(fake, "the first question")
        await run.wait_for(lambda: any("Partial words" in m.content for m in answer_parts(fake)))
        await asyncio.sleep(0.5)
        await ask(fake, "a second thought")
        await run.wait_for(lambda: any(m.content == "Second." for m in answer_parts(fake)), timeout=10)
    texts = request_texts(server.requests[1])
    assert texts[-1].endswith("a second thought")
    assert any(text.startswith("user: ") and "the first question" in text for text in texts[:-1])
    assert any(text.startswith("assistant: Partial words") for text in texts[:-1])
    no_429s(fake)


async def test_an_answer_continued_by_a_newer_one_or_a_day_old_can_no_longer_change(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("First answer."), openai_stream("Second answer."))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "first")
        regen = button(fake, "regen", question)
        await run.wait_for(lambda: carrying(fake, regen) is not None)
        first = carrying(fake, regen)
        second_question = await fake.send_user_message("go on", reply_to=first.id)
        later = button(fake, "regen", second_question)
        await run.wait_for(lambda: carrying(fake, later) is not None)
        await fake.press(first.id, regen)
        expired = t("chat.controls.expired", "en")
        await run.wait_for(lambda: ephemeral_texts(fake).count(expired) == 1)
        await asyncio.sleep(0.5)  # written behind
        async with bot.sessions() as session, session.begin():
            await session.execute(update(AnswerRecord).values(created_at=datetime.now(UTC) - timedelta(hours=25)))
    restarted = turn_bot()  # the day-old record is read from the database
    async with running_bot(fake, restarted) as run:
        await fake.press(carrying(fake, later).id, later)
        await run.wait_for(lambda: ephemeral_texts(fake).count(expired) == 2)
    assert len(server.requests) == 2  # neither press asked the provider
    assert first.content == "First answer."
    no_429s(fake)


async def test_long_reasoning_comes_as_a_file(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    thinking = ["step by step " * 20] * 12  # about 3,100 characters
    server.reply(openai_stream("Done.", reasoning=thinking))
    async with answering(fake, server, turn_bot) as (bot, run):
        question = await ask(fake, "think hard")
        why = button(fake, "why", question)
        await run.wait_for(lambda: carrying(fake, why) is not None)
        await fake.press(carrying(fake, why).id, why)
        await run.wait_for(lambda: any(m.files for m in fake.bot_messages(ephemeral=True)))
    [reply] = [m for m in fake.bot_messages(ephemeral=True) if m.files]
    [(name, data)] = reply.files.items()
    assert name == "reasoning.txt" and data.decode().count("step by step") == 240
    no_429s(fake)


async def test_what_arrives_while_a_listen_question_waits_for_the_gap_is_batched(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    """Batching off (0 s), a gap of 3 s: the member's two messages that wait for the gap
    are one question; the member's first message had its own answer."""
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Noted."))
    async with answering(fake, server, turn_bot) as (bot, run):
        async with bot.sessions() as session, session.begin():
            await set_listen_channel(session, int(fake.guild_id), int(fake.channel_id), 3.0)
            await set_values(session, int(fake.guild_id), LISTENING, {"batch_seconds": 0})
        await asyncio.sleep(0.3)
        await fake.send_user_message("first thought")
        await run.wait_for(lambda: len(answer_parts(fake)) == 1)
        await fake.send_user_message("second thought")
        await asyncio.sleep(0.5)
        await fake.send_user_message("third thought")
        await run.wait_for(lambda: len(answer_parts(fake)) == 2, timeout=10)
        await asyncio.sleep(0.5)
    assert len(answer_parts(fake)) == 2
    last = request_texts(server.requests[-1])[-1]
    assert last.index("second thought") < last.index("third thought")
    no_429s(fake)


async def test_regenerate_counts_against_the_limits_like_any_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Counted once."))
    async with answering(fake, server, turn_bot) as (bot, run):
        await command(run, fake, "limits", sub("set", opt("messages_per_hour", 1)))
        question = await ask(fake, "one question")
        regen = button(fake, "regen", question)
        await run.wait_for(lambda: carrying(fake, regen) is not None)
        await fake.press(carrying(fake, regen).id, regen)
        limit = "You have reached this server's limit of 1"
        await run.wait_for(lambda: any(m.content.startswith(limit) for m in answer_parts(fake)))
    assert len(server.requests) == 1  # the regeneration was refused before any provider was asked
    no_429s(fake)
