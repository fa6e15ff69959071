"""The thought log is posted after the answer's turn is released: posting reasoning to
another channel waits for that channel's own Discord budget, and an answer waiting for a
turn (MAX_CONCURRENT_ANSWERS) must not wait for it too."""

from __future__ import annotations

import bot.question.books as books
from bot import repo
from tests.support.data_openai import chunk, sse_body, usage_chunk
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.turn.test_provider_rules_turn import answered, default_route
from tests.turn.test_turn_discord import ask

THOUGHT = "The member wants a greeting."


async def test_reasoning_is_posted_once_the_turn_is_free(fake_discord: FakeDiscord,
                                                         provider_server: ProviderReplayServer, turn_bot,
                                                         monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    server.reply(Reply(body=sse_body([chunk({"role": "assistant", "reasoning_content": THOUGHT}),
                                      chunk({"content": "Hello there."}), chunk({}, "stop"), usage_chunk()])))
    bot = turn_bot(**default_route(server, "deepseek", "deepseek-v4-flash", "/v1"), MAX_CONCURRENT_ANSWERS="1")
    turns_running_when_posted: list[int] = []
    post = books.post_thought_log

    async def watched(*args, **kwargs):
        turns_running_when_posted.append(bot.turns.running)
        return await post(*args, **kwargs)

    monkeypatch.setattr(books, "post_thought_log", watched)
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_thought_log_channel(session, int(fake.guild_id), int(fake.thought_channel_id))
        await ask(fake, "say hello")
        await run.wait_for(lambda: answered(fake, "Hello there."))
        await run.wait_for(lambda: bool(fake.bot_messages(fake.thought_channel_id)))
    assert turns_running_when_posted == [0]
    [posted] = fake.bot_messages(fake.thought_channel_id)
    assert THOUGHT in posted.embeds[0]["description"]
