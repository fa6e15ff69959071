"""`/settings images` and `/limits set images_per_day` through the real bot: a manager
turns images off (then /imagine is refused in one line and answers are offered no drawing
tool) or sets the server's daily bound in `/limits`, the lower of it and the operator's
applying; a member may change neither; out of bounds is one line; /status shows it."""

from __future__ import annotations

from tests.capabilities.images.conftest import image_route
from tests.capabilities.images.test_imagine import finished, imagine, posted
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_image_provider import FakeImageProvider
from tests.support.fake_provider_server import ProviderReplayServer

SEND = str((1 << 10) | (1 << 11))


async def images(run, fake: FakeDiscord, *options, **kwargs):
    return await command(run, fake, "settings", sub("images", *options), **kwargs)


async def test_a_manager_sets_the_servers_bound_and_turns_images_off(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider, IMAGES_PER_DAY="5"))
    async with running_bot(fake, bot) as run:
        on = await images(run, fake, opt("enabled", True))
        one = await command(run, fake, "limits", sub("set", opt("images_per_day", 1)))
        too_many = await command(run, fake, "limits", sub("set", opt("images_per_day", 1001)))
        member = await command(run, fake, "limits", sub("set", opt("images_per_day", 9)), permissions=SEND)
        member_off = await images(run, fake, opt("enabled", False), permissions=SEND)
        shown = await command(run, fake, "limits", sub("show"))
        status = await command(run, fake, "status")
        await imagine(run, fake, "a first lake")
        await imagine(run, fake, "a second lake")
        await finished(run, fake, 2)
        off = await images(run, fake, opt("enabled", False))
        refused = await imagine(run, fake, "a third lake")
    assert on.content == discord_text(fake, "commands.reply.images_on")
    assert "Images per member per day (UTC): 1" in one.content
    assert too_many.content == discord_text(fake, "commands.error.limit_out_of_range", option="images_per_day",
                                            limit="1,000")
    assert member.ephemeral and "Manage Server" in member.content
    assert member_off.ephemeral and "Manage Server" in member_off.content
    assert "Images per member per day (UTC): 1" in shown.content
    assert "Images: on." in status.content
    # The two ran at once: which one took the day's image is a race, that one did is not.
    lines = sorted(m.content for m in fake.bot_messages(ephemeral=True) if m.content.startswith(("Done", "Your images")))
    assert lines == ["Done: the image is posted in this channel.",
                     "Your images for today (1) are used up; more tomorrow (UTC)."]  # the server's 1, not the 5
    assert off.content == discord_text(fake, "commands.reply.images_off")
    assert refused.content == discord_text(fake, "commands.imagine.off")
    assert len(posted(fake)) == 1 and len(image_provider.requests) == 1


async def test_the_operators_bound_applies_where_it_is_lower_than_the_servers(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider, IMAGES_PER_DAY="1"))
    async with running_bot(fake, bot) as run:
        await command(run, fake, "limits", sub("set", opt("images_per_day", 3)))
        await imagine(run, fake, "a first hill")
        await finished(run, fake, 1)
        await imagine(run, fake, "a second hill")
        await finished(run, fake, 2)
    lines = [m.content for m in fake.bot_messages(ephemeral=True) if m.content.startswith(("Done", "Your images"))]
    assert lines == ["Done: the image is posted in this channel.",
                     "Your images for today (1) are used up; more tomorrow (UTC)."]
    assert len(image_provider.requests) == 1


async def test_with_images_off_answers_are_offered_no_drawing_tool(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot,
        image_provider: FakeImageProvider) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("First."), openai_stream("Second."))
    bot = turn_bot(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> hello", mention_bot=True)
        await run.wait_for(lambda: len(server.requests) == 1, timeout=10)
        await images(run, fake, opt("enabled", False))
        await fake.send_user_message(f"<@{fake.bot_user['id']}> hello again", mention_bot=True)
        await run.wait_for(lambda: len(server.requests) == 2, timeout=10)
    offered = [[tool["function"]["name"] for tool in request.json.get("tools", [])] for request in server.requests]
    assert "draw_image" in offered[0] and "draw_image" not in offered[1]
