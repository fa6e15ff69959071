"""A mention with only a file is a question (the file is what is asked about), in a channel
and in a thread; thread names stay within Discord's bounds whatever the question looks like.
The real LLMBot against the fake Discord and the replay provider."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from providers.i18n import t
from tests.support.check_answers import INDICATOR
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord, StoredMessage, UserFile
from tests.support.fake_provider_server import ProviderReplayServer

COLOR = (200, 30, 40)


@pytest.fixture
def make_bot(tmp_path):
    make = llmbot_factory(tmp_path, "files.sqlite3")
    return lambda **env: make(**{"ALLOW_PRIVATE_ENDPOINTS": "true", **env})


def photo(name: str = "photo.png") -> UserFile:
    out = io.BytesIO()
    Image.new("RGB", (64, 32), COLOR).save(out, "PNG")
    return UserFile(name, out.getvalue(), "image/png")


def answers(fake: FakeDiscord, channel_id: str) -> list[StoredMessage]:
    return [m for m in fake.bot_messages(channel_id) if m.content and not m.content.startswith("-# ")
            and m.webhook_token is None and INDICATOR not in m.content]


def image_parts(turn: dict[str, Any]) -> list[Image.Image]:
    found = []
    for part in turn["content"] if isinstance(turn["content"], list) else []:
        if part.get("type") == "image_url":
            data = part["image_url"]["url"].split(",", 1)[1]
            found.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return found


def texts(turn: dict[str, Any]) -> list[str]:
    content = turn["content"]
    return [content] if isinstance(content, str) else [p["text"] for p in content if p.get("type") == "text"]


async def mention(fake: FakeDiscord, text: str = "", **options: Any) -> StoredMessage:
    return await fake.send_user_message(f"<@{fake.bot_user['id']}>{text}", mention_bot=True, **options)


async def test_a_mention_with_only_an_image_is_answered_about_the_image(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("A red rectangle.", piece=5))
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        question = await mention(fake, files=[photo()])
        await run.wait_for(lambda: bool(answers(fake, fake.channel_id)))
    [answer] = answers(fake, fake.channel_id)
    assert answer.content == "A red rectangle."
    assert answer.message_reference["message_id"] == question.id
    assert t("chat.empty_prompt", "en") not in [m.content for m in fake.bot_messages()]
    [request] = server.requests
    turn = request.json["messages"][-1]
    assert (turn["role"], turn["name"]) == ("user", "Alice")
    assert texts(turn) == ["Attached image: photo.png"]
    [image] = image_parts(turn)
    assert image.convert("RGB").getpixel((5, 5)) == COLOR


async def test_a_bare_mention_without_files_still_gets_the_hint(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    async with running_bot(fake, make_bot()) as run:
        await mention(fake)
        await run.wait_for(lambda: bool(fake.bot_messages()))
    assert [m.content for m in fake.bot_messages()] == [t("chat.empty_prompt", "en")]
    assert server.requests == []


async def test_a_file_only_question_opens_a_thread_named_by_the_file_and_its_image_stays_in_the_talk(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(openai_stream("A red rectangle.", piece=5), openai_stream("Red.", piece=5))
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await command(run, fake, "settings", sub("threads", opt("enabled", True)))
        question = await mention(fake, files=[photo("sunset.png")])
        await run.wait_for(lambda: bool(answers(fake, question.id)))
        await fake.send_user_message("which colour is it?", channel_id=question.id)
        await run.wait_for(lambda: len(answers(fake, question.id)) == 2)
    assert fake.thread_of(question.id)["name"] == "sunset.png"
    follow_up = server.requests[1].json["messages"]
    assert [(m["role"], texts(m)) for m in follow_up[1:3]] == [
        ("user", ["(attached: sunset.png)"]), ("assistant", ["A red rectangle."])]
    question_turn = follow_up[-1]
    assert texts(question_turn) == ["Earlier message's image: sunset.png", "which colour is it?"]
    assert len(image_parts(question_turn)) == 1  # the starter's image came along with the follow-up


@pytest.mark.parametrize(("text", "expected"), [
    (" " + "x" * 150, "x" * 99 + "…"),
    (" <@123456789012345678> please <:blob:123456789012345678> summarize ||this|| `code` now", None),
    (" ** __ ~~", None),
])
async def test_thread_names_are_never_empty_and_fit_discords_limit(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, make_bot, text, expected) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Done.", piece=5))
    bot = make_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await command(run, fake, "settings", sub("threads", opt("enabled", True)))
        question = await mention(fake, text)
        await run.wait_for(lambda: bool(answers(fake, question.id)) or bool(answers(fake, fake.channel_id)))
    thread = fake.thread_of(question.id)
    assert thread is not None, [m.content for m in fake.bot_messages()]
    assert 1 <= len(thread["name"]) <= 100
    if expected is not None:
        assert thread["name"] == expected
    elif "please" in text:  # mentions and markdown left out, a custom emoji by its name
        assert thread["name"] == "please :blob: summarize this code now"
    else:  # nothing but markdown: named after the member
        assert thread["name"] == t("chat.thread_name", "en", name="Alice")
