"""The `draw_image` tool through the real bot: offered when an image route exists, the
fake text provider asks for it, the image is drawn for the asker and posted under the
answer with its prompt line; a safety refusal or the daily limit goes back to the model
as the tool's error and nothing is posted; a server's own route that cannot draw (no key)
offers no tool, dropped from the cache when a manager sets it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.capabilities.images.route_storage import set_image_target
from bot.capabilities.images.storage import take_image
from tests.capabilities.images.conftest import image_route
from tests.support.data_openai import chunk, openai_stream, tool_delta
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_image_provider import FakeImageProvider
from tests.support.fake_provider_server import ProviderReplayServer, Reply


def draw_call(prompt: str, size: str = "1024x1536") -> Reply:
    return Reply.sse([chunk({"role": "assistant", "content": ""}),
                      chunk({"tool_calls": [tool_delta(0, id="call_1", name="draw_image",
                                                       arguments=json.dumps({"prompt": prompt, "size": size}))]}),
                      chunk({}, "tool_calls")])


def tool_result(server: ProviderReplayServer) -> dict:
    [result] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    return json.loads(result["content"])


async def ask(fake: FakeDiscord, words: str) -> None:
    await fake.send_user_message(f"<@{fake.bot_user['id']}> {words}", mention_bot=True)


async def test_the_models_drawing_is_posted_under_the_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        image_provider: FakeImageProvider) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(draw_call("a lighthouse at dusk, watercolour"), openai_stream("Here is your lighthouse."))
    bot = turn_bot(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "draw me a lighthouse")
        await run.wait_for(lambda: any(m.files for m in fake.bot_messages(fake.channel_id)), timeout=15)
    first = server.requests[0].json
    assert "draw_image" in [tool["function"]["name"] for tool in first["tools"]]
    assert tool_result(server)["result"].startswith("The image was drawn")
    [answer] = [m for m in fake.bot_messages(fake.channel_id) if m.content.startswith("Here is your lighthouse.")]
    assert answer.content.endswith("\n\n-# prompt: a lighthouse at dusk, watercolour")
    [image] = [m for m in fake.bot_messages(fake.channel_id) if m.files]
    assert image.files == {"image.png": image_provider.image}
    assert int(image.id) > int(answer.id)  # below the answer
    [seen] = image_provider.requests
    assert seen.fields == {"model": "gpt-image-1", "prompt": "a lighthouse at dusk, watercolour", "n": 1,
                           "size": "1024x1536"}


async def test_a_safety_refusal_is_the_tools_error_and_nothing_is_posted(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        image_provider: FakeImageProvider) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(draw_call("something forbidden"), openai_stream("I cannot draw that."))
    bot = turn_bot(**image_route(image_provider, IMAGES_PER_DAY="0"))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "draw something")
        await run.wait_for(lambda: any(m.content.startswith("I cannot draw that.")
                                       for m in fake.bot_messages(fake.channel_id)), timeout=15)
    error = tool_result(server)["error"]
    assert error["type"] == "tool_error" and error["message"].startswith("The image model's safety system declined")
    assert not any(m.files for m in fake.bot_messages())
    assert not any("-# prompt:" in m.content for m in fake.bot_messages())


async def test_the_daily_limit_is_the_tools_error(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        image_provider: FakeImageProvider) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(draw_call("a cat"), openai_stream("You are out of images today."))
    bot = turn_bot(**image_route(image_provider, IMAGES_PER_DAY="1"))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        async with bot.sessions() as session, session.begin():  # the member drew today's one already
            assert await take_image(session, int(fake.member_user["id"]), datetime.now(UTC).date(), 1, on_operator=True)
        await ask(fake, "draw a cat")
        await run.wait_for(lambda: any(m.content.startswith("You are out of images today.")
                                       for m in fake.bot_messages(fake.channel_id)), timeout=15)
    assert tool_result(server)["error"]["message"] == "Your images for today (1) are used up; more tomorrow (UTC)."
    assert image_provider.requests == []



async def test_no_tool_is_offered_where_the_servers_own_route_has_no_key(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        image_provider: FakeImageProvider) -> None:
    """The server's own route replaces the operator's there: without a key of its
    provider nothing can be drawn, so the model is not offered the tool."""
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("First."), openai_stream("Second."))
    bot = turn_bot(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "hello")
        await run.wait_for(lambda: len(server.requests) == 1, timeout=10)
        async with bot.sessions() as session, session.begin():
            await set_image_target(session, int(fake.guild_id), "openai", "gpt-image-1")
        await ask(fake, "hello again")
        await run.wait_for(lambda: len(server.requests) == 2, timeout=10)
    offered = [[tool["function"]["name"] for tool in request.json.get("tools", [])] for request in server.requests]
    assert "draw_image" in offered[0] and "draw_image" not in offered[1]
