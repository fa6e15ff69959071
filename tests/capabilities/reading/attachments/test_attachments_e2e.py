"""Attachments through the real LLMBot: the fake Discord serves the member's files, the
replay provider records what each API family was sent."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from bot.capabilities.reading.attachment_files import MAX_LONG_SIDE
from tests.support.data_openai_responses import responses_sse
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord, StoredMessage, UserFile
from tests.support.fake_provider_server import ProviderReplayServer, Reply

ANSWER = "I looked at what you sent."


def openai_reply(text: str = ANSWER) -> Reply:
    return responses_sse(text)  # OpenAI speaks the Responses API


def anthropic_reply(text: str = ANSWER) -> Reply:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "vision-model", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}
    return Reply.named_sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 6}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def gemini_reply(text: str = ANSWER) -> Reply:
    return Reply.sse([{
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 6, "totalTokenCount": 11},
    }], done=False)


REPLIES = {"openai": openai_reply, "anthropic": anthropic_reply, "google": gemini_reply}


def image_file(name: str, width: int, height: int, fmt: str = "PNG", color=(10, 120, 200)) -> UserFile:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, fmt)
    return UserFile(name, out.getvalue(), f"image/{fmt.lower()}")


def last_turn(provider: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The question's parts in the family's own shape."""
    if provider == "google":
        return body["contents"][-1]["parts"]
    content = (body["input"] if provider == "openai" else body["messages"])[-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def images_sent(provider: str, body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(media type, bytes) of every image part of the question, read back from the wire shape."""
    found = []
    for part in last_turn(provider, body):
        if provider == "openai" and part.get("type") == "input_image":
            header, data = part["image_url"].split(",", 1)
            assert header.startswith("data:") and header.endswith(";base64")
            found.append((header[5:-7], base64.b64decode(data, validate=True)))
        elif provider == "anthropic" and part.get("type") == "image":
            assert part["source"]["type"] == "base64"
            found.append((part["source"]["media_type"], base64.b64decode(part["source"]["data"], validate=True)))
        elif provider == "google" and "inlineData" in part:
            found.append((part["inlineData"]["mimeType"], base64.b64decode(part["inlineData"]["data"], validate=True)))
    return found


def texts_sent(provider: str, body: dict[str, Any]) -> str:
    return "\n".join(p.get("text", "") for p in last_turn(provider, body))


def notes(fake: FakeDiscord) -> list[StoredMessage]:
    return [m for m in fake.bot_messages(fake.channel_id) if m.content.startswith("-# ")]


def answered(fake: FakeDiscord) -> bool:
    return any(ANSWER in m.content for m in fake.bot_messages(fake.channel_id))


async def ask_with(fake: FakeDiscord, text: str, files: list[UserFile], reply_to: str | None = None):
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, files=files,
                                        reply_to=reply_to)


async def run_question(fake: FakeDiscord, server: ProviderReplayServer, bot, provider: str,
                       files: list[UserFile], text: str = "what is this?") -> dict[str, Any]:
    server.reply(REPLIES[provider]())
    async with running_bot(fake, bot) as run:
        await ask_with(fake, text, files)
        await run.wait_for(lambda: answered(fake))
    [request] = server.requests
    return request.json


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
async def test_an_attached_image_reaches_each_family_downscaled(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot, provider) -> None:
    fake = fake_discord
    body = await run_question(fake, provider_server, family_bot(provider), provider,
                              [image_file("diagram.png", 3200, 1800)])
    [(media_type, data)] = images_sent(provider, body)
    image = Image.open(io.BytesIO(data))
    assert media_type == "image/png" and image.format == "PNG"
    assert max(image.size) <= MAX_LONG_SIDE and image.size == (1568, 882)
    assert image.convert("RGB").getpixel((100, 100)) == (10, 120, 200)
    assert "diagram.png" in texts_sent(provider, body) and "what is this?" in texts_sent(provider, body)
    assert notes(fake) == []
    assert len(fake.downloads) == 1


async def test_an_oversized_image_is_refused_from_its_size_without_downloading(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake = fake_discord
    big = image_file("huge_photo.png", 40, 40)
    big.size = 11 * 1024 * 1024  # what Discord states
    body = await run_question(fake, provider_server, family_bot("anthropic"), "anthropic", [big])
    assert images_sent("anthropic", body) == []
    assert "huge_photo.png was not read" in texts_sent("anthropic", body)
    [note] = notes(fake)
    assert "huge\\_photo.png" in note.content and "10 MB" in note.content
    assert fake.downloads == []


async def test_a_broken_image_gets_a_note_and_the_model_is_told(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake = fake_discord
    broken = UserFile("broken.png", b"\x89PNG\r\n\x1a\nthis is not really a png", "image/png")
    body = await run_question(fake, provider_server, family_bot("google"), "google", [broken])
    assert images_sent("google", body) == []
    assert "broken.png was not read: the image could not be read" in texts_sent("google", body)
    [note] = notes(fake)
    assert "broken.png" in note.content and "JPEG" in note.content
    assert note.message_reference is not None  # a reply to the question, before the answer


async def test_a_source_file_is_a_fenced_block_and_a_binary_file_a_note(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake = fake_discord
    source = UserFile("fizz.py", b"for i in range(3):\n    print('fizz' if i % 3 == 0 else i)\n", None)
    binary = UserFile("firmware.bin", bytes(range(256)), "application/octet-stream")
    body = await run_question(fake, provider_server, family_bot("openai"), "openai", [source, binary],
                              text="review this")
    parts = last_turn("openai", body)
    assert all(p["type"] == "input_text" for p in parts)  # OpenAI's Responses parts
    sent = texts_sent("openai", body)
    assert "File: fizz.py\n```python\nfor i in range(3):\n    print('fizz' if i % 3 == 0 else i)\n```" in sent
    assert "firmware.bin was not read: only images, text files, PDFs and Word, Excel and CSV files can be read" in sent
    assert parts[-1] == {"type": "input_text", "text": "review this"}
    [note] = notes(fake)
    assert "firmware.bin" in note.content and "fizz.py" not in note.content


async def test_five_images_keep_four_and_name_the_fifth(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake = fake_discord
    files = [image_file(f"shot{i}.png", 50 + i, 40, color=(i * 40, 0, 0)) for i in range(5)]
    body = await run_question(fake, provider_server, family_bot("openai"), "openai", files)
    sent = images_sent("openai", body)
    assert [Image.open(io.BytesIO(data)).size for _, data in sent] == [(50, 40), (51, 40), (52, 40), (53, 40)]
    [note] = notes(fake)
    assert "shot4.png" in note.content and "4 images" in note.content
    assert "shot4.png was not read: too many images" in texts_sent("openai", body)
    assert len(fake.downloads) == 4  # the fifth was never fetched


async def test_an_image_in_the_replied_to_message_reaches_the_model(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(anthropic_reply())
    async with running_bot(fake, family_bot("anthropic")) as run:
        earlier = await fake.send_user_message("look at my cat", files=[image_file("cat.jpg", 2000, 1500, "JPEG")])
        await ask_with(fake, "what breed is it?", [], reply_to=earlier.id)
        await run.wait_for(lambda: answered(fake))
    [request] = server.requests
    [(media_type, data)] = images_sent("anthropic", request.json)
    assert media_type == "image/jpeg" and Image.open(io.BytesIO(data)).size == (1568, 1176)
    sent = texts_sent("anthropic", request.json)
    assert "Earlier message's image: cat.jpg" in sent and sent.endswith("what breed is it?")
    assert "look at my cat" in request.json["messages"][0]["content"][0]["text"]  # the chain stays history


async def test_a_question_without_files_stays_a_plain_string(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    body = await run_question(fake_discord, provider_server, family_bot("openai"), "openai", [], text="hi")
    content = body["input"][-1]["content"]
    assert isinstance(content, str) and content.endswith(": hi")  # the speaker a prefix on this API
    assert fake_discord.downloads == []


async def test_a_model_that_cannot_read_images_fails_with_the_error_embed(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(Reply.error(400, {"error": {"message": "This model does not support image input.",
                                             "type": "invalid_request_error", "code": None}}))
    async with running_bot(fake, family_bot("openai")) as run:
        await ask_with(fake, "what is this?", [image_file("a.png", 30, 30)])
        await run.wait_for(lambda: any(m.embeds for m in fake.bot_messages(fake.channel_id)))
    [request] = server.requests
    assert len(images_sent("openai", request.json)) == 1
    [embed] = [e for m in fake.bot_messages(fake.channel_id) for e in m.embeds]
    assert "does not support image input" in f"{embed.get('description', '')} {embed.get('fields', '')}"
    assert not answered(fake)


async def test_a_large_text_file_and_a_vanished_file_get_notes(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, family_bot) -> None:
    fake = fake_discord
    large = UserFile("dump.log", b"x" * (150 * 1024), "text/plain")
    gone = UserFile("gone.txt", b"hello", "text/plain", served=False)
    body = await run_question(fake, provider_server, family_bot("openai"), "openai", [large, gone])
    sent = texts_sent("openai", body)
    assert "dump.log was not read: the file is too large" in sent
    assert "gone.txt was not read: the file could not be downloaded" in sent
    [note] = notes(fake)
    lines = note.content.split("\n")
    assert len(lines) == 2 and all(line.startswith("-# ") for line in lines)
    assert "dump.log" in lines[0] and "100 KB" in lines[0]
    assert "gone.txt" in lines[1] and "Discord" in lines[1]
    assert len(fake.downloads) == 1  # only the file that fit was fetched
