"""Threads (`/settings threads`), through the real LLMBot against the fake Discord and the
replay provider: the request bodies the provider received show what history the model
was given in a thread."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.repo.controls import set_channel_mode, set_channel_rule
from providers.i18n import t
from tests.support.check_answers import INDICATOR
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import NO_PERMISSIONS, command, discord_text, opt, sub
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord, StoredMessage
from tests.support.fake_provider_server import ProviderReplayServer

NOTICE = "-# "
CREATE_PUBLIC_THREADS = 1 << 35


@pytest.fixture
def make_bot(tmp_path):
    make = llmbot_factory(tmp_path, "threads.sqlite3")
    return lambda **env: make(**{"ALLOW_PRIVATE_ENDPOINTS": "true", **env})


def said(fake: FakeDiscord, channel_id: str) -> list[StoredMessage]:
    """The bot's answer texts in a channel or thread (notices and embeds left out)."""
    return [m for m in fake.bot_messages(channel_id) if not m.deleted and m.content and not m.embeds
            and not m.content.startswith(NOTICE) and m.webhook_token is None]


def finished(fake: FakeDiscord, channel_id: str, count: int) -> bool:
    found = said(fake, channel_id)
    return len(found) >= count and not any(INDICATOR in m.content for m in found)


def turns(request) -> list[dict[str, Any]]:
    return [m for m in request.json["messages"] if m["role"] != "system"]


async def ask(fake: FakeDiscord, text: str, **options: Any) -> StoredMessage:
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, **options)


async def threads_on(run, fake: FakeDiscord) -> None:
    reply = await command(run, fake, "settings", sub("threads", opt("enabled", True)))
    assert (reply.content, reply.ephemeral) == (t("commands.reply.threads_on", "en"), True)


@contextlib.asynccontextmanager
async def threads_bot(fake: FakeDiscord, server: ProviderReplayServer, bot) -> AsyncIterator[tuple[Any, Any]]:
    """`bot` running against the fakes, configured for the replay provider, threads on."""
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await threads_on(run, fake)
        yield bot, run


async def test_the_switch_is_a_managers_localized_and_shown_by_status(fake_discord: FakeDiscord, make_bot) -> None:
    fake = fake_discord
    async with running_bot(fake, make_bot()) as run:
        before = await command(run, fake, "status")
        refused = await command(run, fake, "settings", sub("threads", opt("enabled", True)),
                                permissions=NO_PERMISSIONS)
        on_ja = await command(run, fake, "settings", sub("threads", opt("enabled", True)), locale="ja")
        after = await command(run, fake, "status")
        off = await command(run, fake, "settings", sub("threads", opt("enabled", False)))
    def status_line(state: str) -> str:
        return t("commands.status.conversation", "en", count=10, threads=t(f"commands.status.threads_{state}", "en"))

    assert status_line("off") in before.content
    assert (refused.content, refused.ephemeral) == ("You need the Manage Server permission for this command.", True)
    assert (on_ja.content, on_ja.ephemeral) == (t("commands.reply.threads_on", "ja"), True)
    assert on_ja.content.startswith("スレッドをオンにしました")
    assert status_line("on") in after.content
    assert off.content == t("commands.reply.threads_off", "en")
    [synced] = [c for c in fake.commands["global"] if c["name"] == "settings"]
    [threads] = [o for o in synced["options"] if o["name"] == "threads"]
    assert threads["name_localizations"]["ja"] == "スレッド"
    assert threads["description"] == "Answer each question in its own thread"


async def test_a_mention_opens_a_thread_and_members_continue_there_without_mentions(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("The moon has phases.", piece=6),
                   openai_stream("Because of the angle.", piece=6),
                   openai_stream("You are welcome.", piece=6))
    async with threads_bot(fake, server, make_bot()) as (bot, run):
        question = await ask(fake, "tell me about the **moon** and its phases, please, in detail")
        await run.wait_for(lambda: finished(fake, question.id, 1))
        thread = fake.thread_of(question.id)
        follow_up = await fake.send_user_message("why do they change?", channel_id=thread["id"])
        await run.wait_for(lambda: finished(fake, question.id, 2))
        await fake.send_user_message("thanks!", channel_id=thread["id"], author=fake.owner)
        await run.wait_for(lambda: finished(fake, question.id, 3))
    assert (thread["name"], thread["parent_id"], thread["owner_id"]) == (
        "tell me about the moon and its phases", fake.channel_id, fake.bot_user["id"])
    assert said(fake, fake.channel_id) == []  # nothing but the question in the channel
    answers = said(fake, thread["id"])
    assert [m.content for m in answers] == ["The moon has phases.", "Because of the angle.", "You are welcome."]
    assert answers[0].message_reference is None  # no reply across channels
    assert answers[1].message_reference["message_id"] == follow_up.id  # in the thread: a reply
    asked = "tell me about the **moon** and its phases, please, in detail"
    assert turns(server.requests[0]) == [{"role": "user", "content": asked, "name": "Alice"}]
    assert turns(server.requests[2]) == [
        {"role": "user", "content": asked, "name": "Alice"},
        {"role": "assistant", "content": "The moon has phases."},
        {"role": "user", "content": "why do they change?", "name": "Alice"},
        {"role": "assistant", "content": "Because of the angle."},
        {"role": "user", "content": "thanks!", "name": "Owner"}]


def paragraph(n: int) -> str:
    return " ".join(f"p{n}w{i}" for i in range(300))[:1490].rsplit(" ", 1)[0] + "."


async def test_the_thread_history_is_bounded_and_a_split_answer_is_one_turn(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    long_answer = "\n\n".join(paragraph(n) for n in range(3))
    server.enqueue(openai_stream(long_answer, piece=500), openai_stream("Short one.", piece=5),
                   openai_stream("Last one.", piece=5))
    async with threads_bot(fake, server, make_bot()) as (bot, run):
        await command(run, fake, "settings", sub("history", opt("messages", 2)))
        question = await ask(fake, "a long story")
        await run.wait_for(lambda: finished(fake, question.id, 3), timeout=20)
        parts = said(fake, question.id)
        await fake.send_user_message("shorter?", channel_id=question.id)
        await run.wait_for(lambda: finished(fake, question.id, 4))
        await fake.send_user_message("and now?", channel_id=question.id)
        await run.wait_for(lambda: finished(fake, question.id, 5)
                           and any(m.content.startswith(NOTICE) for m in fake.bot_messages(question.id)))
    whole = "\n".join(m.content for m in parts)
    assert len(parts) == 3 and all(f"p{n}w1 " in whole for n in range(3))
    assert [m["content"] for m in turns(server.requests[1])] == ["a long story", whole, "shorter?"]
    assert [m["content"] for m in turns(server.requests[2])] == ["shorter?", "Short one.", "and now?"]
    notes = [m.content for m in fake.bot_messages(question.id) if m.content.startswith(NOTICE)]
    assert notes == [NOTICE + discord_text(fake, "chat.history_cut", "en", count="2")]


async def test_without_thread_permission_the_answer_stays_in_the_channel_and_is_logged_once(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot, caplog) -> None:
    fake, server = fake_discord, provider_server
    fake.forbid_threads(fake.channel_id)
    server.reply(openai_stream("Here instead.", piece=5))
    bot = make_bot()
    caplog.set_level(logging.WARNING, logger="bot.question.threads")
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await threads_on(run, fake)
        first = await ask(fake, "one")
        await run.wait_for(lambda: finished(fake, fake.channel_id, 1))
        await ask(fake, "two")
        await run.wait_for(lambda: finished(fake, fake.channel_id, 2))
    answers = said(fake, fake.channel_id)
    assert [m.content for m in answers] == ["Here instead.", "Here instead."]
    assert answers[0].message_reference["message_id"] == first.id
    assert fake.threads == {}
    assert fake.count("POST", r"/messages/\d+/threads$") == 2
    refusals = [r for r in caplog.records if "instead of a thread" in r.getMessage()]
    assert len(refusals) == 1


async def test_a_channel_that_denies_creating_threads_is_answered_in_place_without_trying(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    fake.channel_overwrites[fake.channel_id] = [{"id": fake.guild_id, "type": 0, "allow": "0",
                                                 "deny": str(CREATE_PUBLIC_THREADS)}]
    server.reply(openai_stream("Right here.", piece=5))
    async with threads_bot(fake, server, make_bot()) as (bot, run):
        await ask(fake, "where?")
        await run.wait_for(lambda: finished(fake, fake.channel_id, 1))
    assert [m.content for m in said(fake, fake.channel_id)] == ["Right here."]
    assert fake.count("POST", r"/threads$") == 0


async def test_in_a_members_thread_only_mentions_are_answered_with_the_reply_chain(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("First.", piece=5), openai_stream("Second.", piece=5))
    async with threads_bot(fake, server, make_bot()) as (bot, run):
        topic = await fake.send_user_message("let us talk here", author=fake.owner)
        thread_id = await fake.member_starts_thread(topic.id, fake.owner)
        await fake.send_user_message("no mention, no answer", channel_id=thread_id)
        asked = await ask(fake, "a question", channel_id=thread_id)
        await run.wait_for(lambda: finished(fake, thread_id, 1))
        first = said(fake, thread_id)[0]
        await ask(fake, "a follow-up", channel_id=thread_id, reply_to=first.id)
        await run.wait_for(lambda: finished(fake, thread_id, 2))
    assert set(fake.threads) == {topic.id}  # the bot opened no thread of its own
    assert first.message_reference["message_id"] == asked.id  # a reply, as in a channel
    assert [m["content"] for m in turns(server.requests[0])] == ["a question"]
    assert [m["content"] for m in turns(server.requests[1])] == ["a question", "First.", "a follow-up"]
    assert len(server.requests) == 2


async def test_after_threads_are_turned_off_the_bots_thread_needs_a_mention_again(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Answer.", piece=5))
    async with threads_bot(fake, server, make_bot()) as (bot, run):
        question = await ask(fake, "open a thread")
        await run.wait_for(lambda: finished(fake, question.id, 1))
        await command(run, fake, "settings", sub("threads", opt("enabled", False)))
        await fake.send_user_message("ignored now", channel_id=question.id)
        await ask(fake, "with a mention", channel_id=question.id)
        await run.wait_for(lambda: finished(fake, question.id, 2))
        later = await ask(fake, "in the channel again")
        await run.wait_for(lambda: finished(fake, fake.channel_id, 1))
    assert len(server.requests) == 3
    # Still the thread's conversation: the thread is the history, whatever the switch says.
    assert [m["content"] for m in turns(server.requests[1])] == [
        "open a thread", "Answer.", "ignored now", "with a mention"]
    assert fake.thread_of(later.id) is None


async def test_the_channel_rules_of_the_parent_apply_inside_the_bots_thread(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Answer.", piece=5))
    bot = make_bot()
    guild, denied, allowed = int(fake.guild_id), int(fake.channel_id), int(fake.thought_channel_id)
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await threads_on(run, fake)
        async with bot.sessions() as session, session.begin():
            await set_channel_mode(session, guild, "allowlist")
            await set_channel_rule(session, guild, denied, "allow")
            await set_channel_rule(session, guild, allowed, "allow")
        first = await ask(fake, "open a thread")
        other = await ask(fake, "and another one", channel_id=fake.thought_channel_id)
        await run.wait_for(lambda: finished(fake, first.id, 1) and finished(fake, other.id, 1))
        async with bot.sessions() as session, session.begin():
            await set_channel_rule(session, guild, denied, "deny")
        await fake.send_user_message("still there?", channel_id=first.id)
        await fake.send_user_message("a control question", channel_id=other.id)  # the same path, allowed
        await run.wait_for(lambda: finished(fake, other.id, 2))
    assert sorted(turns(r)[-1]["content"] for r in server.requests) == [
        "a control question", "and another one", "open a thread"]
    assert [m.content for m in said(fake, first.id)] == ["Answer."]  # the denied parent silences its thread


async def test_the_bots_thread_continues_after_a_restart(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    """A new process learns the thread from the server's active threads (GUILD_CREATE)."""
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("Before.", piece=5), openai_stream("After.", piece=5))
    async with threads_bot(fake, server, make_bot()) as (bot, run):
        question = await ask(fake, "remember me")
        await run.wait_for(lambda: finished(fake, question.id, 1))
    async with running_bot(fake, make_bot()) as run:
        await fake.send_user_message("do you?", channel_id=question.id)
        await run.wait_for(lambda: finished(fake, question.id, 2))
    assert [m["content"] for m in turns(server.requests[1])] == ["remember me", "Before.", "do you?"]
