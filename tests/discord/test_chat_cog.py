"""The chat cog inside a real discord.py bot against the fake Discord and the replay provider."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import discord
from discord.ext import commands

from bot.app import credentials_for
from bot.cogs.chat import ChatCog
from bot.load.answers import RunningAnswers
from bot.load.turn_queue import TurnQueue
from bot.question.conversation import addresses_bot, strip_bot_mention
from bot.settings import Settings, load_settings
from providers.i18n import t
from providers.types import Message
from tests.support.check_answers import answer_messages, assert_delivered, delivered
from tests.support.data_openai import long_answer_with_code
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_commands import discord_text
from tests.support.drive_discord_client import RunningBot, fast_ready_kwargs, running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.in_thread import dm_turns


class ChatBot(commands.Bot):
    """The chat cog alone in a bot without a database: the environment default answers."""

    def __init__(self, settings: Settings) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(command_prefix=commands.when_mentioned, intents=intents,
                         allowed_mentions=discord.AllowedMentions.none(), **fast_ready_kwargs())
        self.settings = settings
        self.sessions = None
        self.credentials = credentials_for(None, None, settings)
        self.answers = RunningAnswers()
        self.clients = None
        self.turns = TurnQueue(settings.MAX_CONCURRENT_ANSWERS)

    async def setup_hook(self) -> None:
        await self.add_cog(ChatCog(self))


def settings_for(provider_server: ProviderReplayServer | None, **extra: str) -> Settings:
    if provider_server is None:
        return load_settings(**extra)
    return load_settings(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="gpt-fake",
                         DEFAULT_TEXT_BASE_URL=f"{provider_server.url}/v1",
                         DEFAULT_TEXT_API_KEYS="sk-test-first,sk-test-second", **extra)


@asynccontextmanager
async def chat_bot(fake: FakeDiscord, settings: Settings) -> AsyncIterator[RunningBot]:
    async with running_bot(fake, ChatBot(settings)) as run:
        yield run


def mention(fake: FakeDiscord) -> str:
    return f"<@{fake.bot_user['id']}>"


async def test_mention_streams_answer_with_first_key(fake_discord: FakeDiscord,
                                                     provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    text = "Hello there! This is a short answer."
    provider_server.reply(responses_stream(text, piece=7))
    async with chat_bot(fake, settings_for(provider_server)) as run:
        question = await fake.send_user_message(f"{mention(fake)} say hi", mention_bot=True)
        await run.wait_for(lambda: any(m.content == text for m in answer_messages(fake)))
    [reply] = assert_delivered(fake, text)
    assert reply.message_reference["message_id"] == question.id
    [request] = provider_server.requests
    assert request.api_key == "sk-test-first"
    assert request.json["model"] == "gpt-fake"
    assert request.json["input"][-1] == {"role": "user", "content": "Alice: say hi"}
    assert fake.typing and fake.typing[0][1] <= reply.created_at  # typing before the first text


async def test_stop_keeps_what_was_said(fake_discord: FakeDiscord,
                                        provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    text = " ".join(f"word{i}" for i in range(400))
    provider_server.reply(responses_stream(text, piece=10, event_delay=0.02))
    async with chat_bot(fake, settings_for(provider_server)) as run:
        cog = run.bot.get_cog("ChatCog")
        await fake.send_user_message(f"{mention(fake)} count", mention_bot=True)
        await run.wait_for(lambda: len(answer_messages(fake)) == 1 and "word20" in answer_messages(fake)[0].content)
        running = cog.answers.in_channel(int(fake.channel_id))
        assert cog.answers.fire(running, "stop") == 1
        await run.wait_for(lambda: "▌" not in answer_messages(fake)[0].content)
        assert cog.answers.in_channel(int(fake.channel_id)) == []  # the answer has ended
        await asyncio.sleep(0.3)
    [reply] = answer_messages(fake)
    said, note = reply.content.rsplit("\n\n", 1)
    assert "word20" in said
    assert text.startswith(said) and len(said) < len(text)
    assert note == f"*{t('chat.answer_stopped', 'en')}*"  # the text stays, marked stopped
    assert fake.rate_limited == []


async def test_reply_chain_is_history_and_dm_is_answered(fake_discord: FakeDiscord,
                                                         provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    provider_server.reply(responses_stream("Second answer.", piece=5))
    async with chat_bot(fake, settings_for(provider_server)) as run:
        first_q = await fake.send_user_message(f"{mention(fake)} first question", mention_bot=True)
        await run.wait_for(lambda: any(m.content == "Second answer." for m in answer_messages(fake)))
        first_answer = answer_messages(fake)[0]
        # A reply to the bot, without mentioning it, continues the conversation.
        await fake.send_user_message("and then?", reply_to=first_answer.id)
        await run.wait_for(lambda: len(answer_messages(fake)) == 2)
        await fake.send_user_message("in private", dm=True)
        await run.wait_for(lambda: len(provider_server.requests) == 3)
        await run.wait_for(lambda: any(m.channel_id == fake.dm_channel_id for m in fake.bot_messages()))
    assert first_q.id != first_answer.id
    assert provider_server.requests[1].json["input"] == [{"role": "user", "content": "Alice: first question"},
                                                         {"role": "assistant", "content": "Second answer."},
                                                         {"role": "user", "content": "Alice: and then?"}]
    assert provider_server.requests[2].json["input"] == [{"role": "user", "content": "in private"}]


async def test_unaddressed_messages_are_ignored_and_unconfigured_bot_says_so(fake_discord: FakeDiscord,
                                                                            caplog) -> None:
    """A member reads how the server gets set up (who, with which commands); the
    environment variables are the operator's business and appear in the log only."""
    fake = fake_discord
    async with chat_bot(fake, settings_for(None)) as run:
        await fake.send_user_message("talking among ourselves")
        await fake.send_user_message("@everyone hello")
        await fake.send_user_message(f"{mention(fake)} anyone?", mention_bot=True)
        await run.wait_for(lambda: len(fake.bot_messages()) == 1)
        await asyncio.sleep(0.2)
    [only] = fake.bot_messages()
    assert only.content == discord_text(fake, "chat.not_configured", "en")
    assert "/model set" in only.content and "/keys add" in only.content
    assert "DEFAULT_TEXT" not in only.content
    assert any("DEFAULT_TEXT_PROVIDER" in record.getMessage() for record in caplog.records)


async def test_a_dm_to_a_bot_without_any_route_says_what_a_member_can_do(fake_discord: FakeDiscord) -> None:
    """No server to set up in a DM: the member hears about their own key, not about settings."""
    fake = fake_discord
    async with chat_bot(fake, settings_for(None)) as run:
        await fake.send_user_message("hello?", dm=True)
        await run.wait_for(lambda: len(fake.bot_messages(fake.dm_channel_id)) == 1)
    [only] = fake.bot_messages(fake.dm_channel_id)
    assert only.content == discord_text(fake, "chat.not_configured_dm", "en")
    assert "DEFAULT_TEXT" not in only.content


async def test_bare_mention_gets_a_hint_not_a_provider_call(fake_discord: FakeDiscord,
                                                           provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    async with chat_bot(fake, settings_for(provider_server)) as run:
        await fake.send_user_message(f"{mention(fake)}", mention_bot=True)
        await run.wait_for(lambda: len(fake.bot_messages()) == 1)
    assert fake.bot_messages()[0].content == "Mention me together with your question, and I will answer."
    assert provider_server.requests == []


def test_strip_mention_and_history_shape() -> None:
    assert strip_bot_mention("<@42> hi <@!42>", 42) == "hi"
    assert strip_bot_mention("<@43> hi", 42) == "<@43> hi"

    class Author:
        def __init__(self, uid: int) -> None:
            self.id = uid

    class Msg:
        def __init__(self, uid: int, content: str) -> None:
            self.author, self.content, self.attachments = Author(uid), content, []

    # DM history: a split answer's messages are one turn; notices and empty messages are not turns.
    dm = [Msg(7, "<@42> question"), Msg(42, "answer, part one"), Msg(42, "-# a notice"), Msg(42, "part two"),
          Msg(7, "")]
    assert dm_turns(dm, 42) == [Message("user", "question"), Message("assistant", "answer, part one\npart two")]
    assert callable(addresses_bot)


async def test_long_fast_answer_splits_cleanly(fake_discord: FakeDiscord,
                                               provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    text = long_answer_with_code()
    provider_server.reply(responses_stream(text, piece=40))
    async with chat_bot(fake, settings_for(provider_server)) as run:
        await fake.send_user_message(f"{mention(fake)} long please", mention_bot=True)
        await run.wait_for(lambda: sum(len(m.content) for m in answer_messages(fake)) >= len(text)
                           and "▌" not in answer_messages(fake)[-1].content, timeout=60)
    messages = assert_delivered(fake, text)
    assert len(messages) >= 3
    # The code block did not fit one message: it was closed and reopened with its language.
    assert any(m.content.startswith("```python\n") for m in messages[1:])
    assert fake.rate_limited == []


async def test_unusable_default_route_says_not_configured(fake_discord: FakeDiscord) -> None:
    fake = fake_discord
    settings = settings_for(None, DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="local",
                            DEFAULT_TEXT_API_KEYS="sk-local")  # custom needs a base URL
    async with chat_bot(fake, settings) as run:
        await fake.send_user_message(f"{mention(fake)} hello", mention_bot=True)
        await run.wait_for(lambda: len(fake.bot_messages()) == 1)
    assert fake.bot_messages()[0].content == discord_text(fake, "chat.not_configured", "en")
    assert "sk-local" not in fake.bot_messages()[0].content


def anthropic_events(thinking: str, text: str) -> list[tuple[str, dict]]:
    """A minimal Anthropic Messages stream: one thinking block, then one text block."""
    message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": message})]
    events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
    events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "thinking_delta", "thinking": thinking}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("content_block_start", {"type": "content_block_start", "index": 1,
                                           "content_block": {"type": "text", "text": ""}}))
    for i in range(0, len(text), 8):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 1,
                                               "delta": {"type": "text_delta", "text": text[i : i + 8]}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                        "stop_sequence": None},
                                     "usage": {"output_tokens": 20}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


async def test_anthropic_default_route_streams_and_hides_thinking(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer) -> None:
    fake = fake_discord
    text = "Claude-style answer, streamed through the same cog."
    provider_server.reply(Reply.named_sse(anthropic_events("HIDDEN chain of thought", text)))
    settings = load_settings(DEFAULT_TEXT_PROVIDER="anthropic", DEFAULT_TEXT_MODEL="claude-fake",
                             DEFAULT_TEXT_BASE_URL=provider_server.url, DEFAULT_TEXT_API_KEYS="sk-ant-test")
    async with chat_bot(fake, settings) as run:
        await fake.send_user_message(f"{mention(fake)} hello claude", mention_bot=True)
        await run.wait_for(lambda: delivered(fake, text))
    assert_delivered(fake, text)
    assert all("HIDDEN" not in version for m in fake.bot_messages() for version in m.history)
    [request] = provider_server.requests
    assert request.path == "/v1/messages" and request.api_key == "sk-ant-test"
