"""`/imagine` through the real discord.py client, the fake Discord and the fake image
provider: the image posted in the channel as a file with its prompt line, the request the
openai SDK sent, an image to change, the daily limit, a safety refusal as a note, and
every refusal in one ephemeral line with nothing drawn."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.db.models_images import ImageDay
from tests.capabilities.images.conftest import gemini_route, image_route, openrouter_route
from tests.support.drive_commands import command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord, UserFile
from tests.support.fake_image_provider import FakeImageProvider, png

SEND = str((1 << 10) | (1 << 11))  # View Channel and Send Messages
SEND_FILES = str((1 << 10) | (1 << 11) | (1 << 15))  # ... and Attach Files


async def imagine(run, fake: FakeDiscord, prompt: str, *options: dict[str, Any], **kwargs: Any):
    return await command(run, fake, "imagine", opt("prompt", prompt), *options,
                         **{"permissions": SEND_FILES, **kwargs})


def posted(fake: FakeDiscord) -> list:
    return [m for m in fake.bot_messages(fake.channel_id, ephemeral=False) if m.files]


async def finished(run, fake: FakeDiscord, count: int = 1) -> None:
    """Wait until `count` /imagine responses left "drawing…"."""
    await run.wait_for(lambda: sum(1 for m in fake.bot_messages(ephemeral=True)
                                   if m.history and m.content != m.history[0]) >= count, timeout=15)


async def test_the_image_is_posted_here_with_its_prompt_line(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        working = await imagine(run, fake, "a red fox in *snow* @everyone", opt("size", "1536x1024"))
        assert (working.content, working.ephemeral) == ("Drawing… the image will be posted in this channel.", True)
        await finished(run, fake)
        [image] = posted(fake)
        async with bot.sessions() as session:
            [day] = (await session.scalars(select(ImageDay))).all()
    assert image.files == {"image.png": image_provider.image}
    assert image.content == "-# prompt: a red fox in \\*snow\\* @everyone"
    assert image.allowed_mentions == {"parse": []}
    [done] = fake.bot_messages(ephemeral=True)
    assert done.content == "Done: the image is posted in this channel."
    [seen] = image_provider.requests
    assert seen.fields == {"model": "gpt-image-1", "prompt": "a red fox in *snow* @everyone", "n": 1,
                           "size": "1536x1024"}
    assert (day.user_id, day.images) == (int(fake.member_user["id"]), 1)


@pytest.mark.parametrize(("route", "path"), [
    (gemini_route, "/v1beta/models/gemini-2.5-flash-image:generateContent"),
    (openrouter_route, "/api/v1/chat/completions")])
async def test_gemini_and_openrouter_routes_draw_and_refuse_as_a_note(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider, route, path: str) -> None:
    fake = fake_discord
    bot = bot_factory(**route(image_provider))
    async with running_bot(fake, bot) as run:
        await imagine(run, fake, "a paper crane", opt("size", "1024x1536"))
        await imagine(run, fake, "an unsafe output")
        await finished(run, fake, 2)
    [image] = posted(fake)
    assert (image.files, image.content) == ({"image.png": image_provider.image}, "-# prompt: a paper crane")
    assert [m.content for m in fake.bot_messages(ephemeral=True)] == [
        "Done: the image is posted in this channel.",
        "The image model's safety system declined this prompt; nothing was drawn. Try describing it differently."]
    assert [seen.path for seen in image_provider.requests] == [path, path]


async def test_an_attached_image_is_changed_through_edits(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    source = png((250, 0, 0))
    attachment = fake._user_attachment(UserFile("cat.png", source, "image/png"))
    bot = bot_factory(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        await imagine(run, fake, "make the cat blue", {"type": 11, "name": "image", "value": attachment["id"]},
                      resolved={"attachments": {attachment["id"]: attachment}})
        await finished(run, fake)
    [seen] = image_provider.requests
    assert seen.path == "/v1/images/edits"
    assert seen.files == {"image": ("cat.png", "image/png", source)}
    assert seen.fields["prompt"] == "make the cat blue"
    assert posted(fake)[0].content == "-# prompt: make the cat blue"


async def test_the_daily_limit_refuses_and_a_safety_refusal_is_a_note_that_costs_nothing(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider, IMAGES_PER_DAY="1"))
    async with running_bot(fake, bot) as run:
        await imagine(run, fake, "something forbidden")
        await finished(run, fake, 1)
        await imagine(run, fake, "a calm lake")
        await finished(run, fake, 2)
        await imagine(run, fake, "a second lake", locale="ja")
        await finished(run, fake, 3)
    lines = [m.content for m in fake.bot_messages(ephemeral=True)]
    assert lines == [
        "The image model's safety system declined this prompt; nothing was drawn. Try describing it differently.",
        "Done: the image is posted in this channel.",
        "今日の画像（1 枚）を使い切りました。明日（UTC）また描けます。",
    ]
    assert not any(m.embeds for m in fake.bot_messages())  # a note, never an error embed
    assert [m.content for m in posted(fake)] == ["-# prompt: a calm lake"]
    assert len(image_provider.requests) == 2  # the limit refused before asking


async def test_an_image_discord_no_longer_serves_is_one_line_and_draws_nothing(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    gone = fake._user_attachment(UserFile("cat.png", png(), "image/png", served=False))
    bot = bot_factory(**image_route(image_provider))
    async with running_bot(fake, bot) as run:
        await imagine(run, fake, "make it blue", {"type": 11, "name": "image", "value": gone["id"]},
                      resolved={"attachments": {gone["id"]: gone}})
        await finished(run, fake)
    [line] = fake.bot_messages(ephemeral=True)
    assert line.content == ("The image to change could not be downloaded from Discord; attach it again. "
                            "Nothing was drawn.")
    assert image_provider.requests == [] and posted(fake) == []


async def test_each_refusal_is_one_line_and_draws_nothing(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider))
    bad = fake._user_attachment(UserFile("notes.txt", b"hello", "text/plain"))
    async with running_bot(fake, bot) as run:
        replies = [
            await imagine(run, fake, "a cat", permissions=SEND),
            await imagine(run, fake, "x" * 1001),
            await imagine(run, fake, "   "),
            await imagine(run, fake, "a cat", {"type": 11, "name": "image", "value": bad["id"]},
                          resolved={"attachments": {bad["id"]: bad}}),
        ]
    assert [(r.content, r.ephemeral) for r in replies] == [
        ("You cannot post files in this channel, so the bot will not post an image here for you.", True),
        ("A prompt can be at most 1000 characters (this one has 1001).", True),
        ("Say what to draw: the prompt is empty.", True),
        ("The image to change must be a PNG, JPEG or WebP file.", True),
    ]
    assert image_provider.requests == [] and posted(fake) == []


async def test_where_the_bot_does_not_answer_imagine_draws_nothing(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider, ALLOW_DMS="false"))
    async with running_bot(fake, bot) as run:
        in_a_dm = await imagine(run, fake, "a cat", dm=True)
    assert in_a_dm.ephemeral and in_a_dm.content == discord_text(fake, "chat.dms_off")
    assert image_provider.requests == []


async def test_without_an_image_route_imagine_says_so(fake_discord: FakeDiscord, bot_factory) -> None:
    fake = fake_discord
    async with running_bot(fake, bot_factory()) as run:
        reply = await imagine(run, fake, "a cat")
    assert reply.content == "This bot has no image model: its operator has not set one up."


async def test_personal_usage_counts_the_members_images_with_the_operators_price(
        fake_discord: FakeDiscord, bot_factory, image_provider: FakeImageProvider) -> None:
    fake = fake_discord
    bot = bot_factory(**image_route(image_provider, IMAGE_PRICE="0.04"))
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "personal", sub("usage"), permissions=SEND)
        await imagine(run, fake, "a fox")
        await finished(run, fake)
        await imagine(run, fake, "a forbidden fox")  # refused: not counted
        await finished(run, fake, 2)
        after = await command(run, fake, "personal", sub("usage"), permissions=SEND)
    assert "Images drawn" not in before.content
    assert after.content.endswith("\nImages drawn: 1 today, 1 in 30 days (1 on the bot's own route: about $0.04)")
