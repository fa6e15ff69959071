"""The replay server speaks each SDK's wire format: proven through the real SDKs with
retries off, on the suite's own fixtures and, when present, on the shared corpus."""

from __future__ import annotations

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from tests.support.env_corpus import CORPUS, requires_corpus
from tests.support.fake_provider_server import Reply, split_events


def openai_client(server, key: str = "sk-test") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)


def anthropic_client(server, key: str = "sk-ant-test") -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key=key, max_retries=0)


def genai_client(server, key: str = "AIza-test") -> genai.Client:
    return genai.Client(
        api_key=key,
        http_options=genai_types.HttpOptions(
            base_url=server.url, retry_options=genai_types.HttpRetryOptions(attempts=1)
        ),
    )


async def openai_text(server, key: str = "sk-test") -> str:
    client = openai_client(server, key)
    stream = await client.chat.completions.create(
        model="gpt-fake", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    out = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            out.append(chunk.choices[0].delta.content)
    await client.close()
    return "".join(out)


OPENAI_HELLO = [
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": None}]},
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"content": "lo!"}, "finish_reason": "stop"}]},
]


def test_split_events_keeps_terminators():
    body = b"data: a\n\ndata: b\r\n\r\ndata: c"
    assert split_events(body) == [b"data: a\n\n", b"data: b\r\n\r\n", b"data: c"]
    assert b"".join(split_events(body)) == body


async def test_openai_sdk_parses_own_fixture(provider_server):
    provider_server.reply(Reply.sse(OPENAI_HELLO))
    assert await openai_text(provider_server) == "Hello!"
    request = provider_server.requests[-1]
    assert request.path == "/v1/chat/completions"
    assert request.api_key == "sk-test"
    assert request.json["stream"] is True


async def test_random_pieces_do_not_change_what_the_sdk_reads(provider_server):
    provider_server.reply(Reply.sse(OPENAI_HELLO, random_pieces=7, max_piece=5))
    assert await openai_text(provider_server) == "Hello!"


async def test_reply_chosen_per_api_key(provider_server):
    provider_server.reply(Reply.error(429, {"error": {"message": "slow down", "type": "rate_limit_error"}}),
                          key="sk-busy")
    provider_server.reply(Reply.sse(OPENAI_HELLO))
    with pytest.raises(openai.RateLimitError):
        await openai_text(provider_server, key="sk-busy")
    assert await openai_text(provider_server, key="sk-free") == "Hello!"
    assert len(provider_server.requests) == 2  # retries are off: one request each


async def test_cut_after_events_closes_abruptly(provider_server):
    provider_server.reply(Reply.sse(OPENAI_HELLO, cut_after_events=1))
    client = openai_client(provider_server)
    stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
    seen = []
    with pytest.raises(Exception):  # noqa: B017 - the broken body surfaces as a transport error
        async for chunk in stream:
            seen.append(chunk.choices[0].delta.content)
    assert seen == ["Hel"]
    await client.close()


async def test_cut_after_bytes_delivers_the_prefix(provider_server):
    reply = Reply.sse(OPENAI_HELLO)
    first = split_events(reply.body)[0]
    provider_server.reply(reply.with_options(cut_after_bytes=len(first) + 10))
    client = openai_client(provider_server)
    stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
    seen = []
    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the broken body as a transport error
        async for chunk in stream:
            seen.append(chunk.choices[0].delta.content)
    assert seen == ["Hel"]
    await client.close()


async def test_anthropic_sdk_parses_own_fixture(provider_server):
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-fake",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 3, "output_tokens": 1}}
    provider_server.reply(Reply.named_sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
        ("message_stop", {"type": "message_stop"}),
    ]))
    client = anthropic_client(provider_server)
    events = [e.type async for e in await client.messages.create(
        model="claude-fake", max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=True)]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert provider_server.requests[-1].path == "/v1/messages"
    await client.close()


async def test_anthropic_error_body(provider_server):
    provider_server.reply(Reply.error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    client = anthropic_client(provider_server)
    with pytest.raises(anthropic.OverloadedError):
        await client.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}], stream=True)
    assert len(provider_server.requests) == 1
    await client.close()


async def test_gemini_sdk_parses_own_fixture(provider_server):
    body = (
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}]}\r\n\r\n'
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"lo!"}]},"index":0,"finishReason":"STOP"}]}\r\n\r\n'
    )
    provider_server.reply(Reply(body=body.encode()))
    client = genai_client(provider_server)
    texts = [c.text async for c in await client.aio.models.generate_content_stream(model="gemini-fake", contents="hi")]
    assert "".join(texts) == "Hello!"
    assert provider_server.requests[-1].path.endswith("/models/gemini-fake:streamGenerateContent")
    assert provider_server.requests[-1].api_key == "AIza-test"
    await client.aio.aclose()


async def test_gemini_error_body(provider_server):
    provider_server.reply(Reply.error(503, {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}))
    client = genai_client(provider_server)
    with pytest.raises(genai_errors.ServerError) as info:
        async for _ in await client.aio.models.generate_content_stream(model="g", contents="hi"):
            pass
    assert info.value.code == 503
    assert len(provider_server.requests) == 1
    await client.aio.aclose()


# ---- the shared corpus, through the same SDKs --------------------------------------

@requires_corpus
async def test_corpus_openai_stream_and_error(provider_server):
    provider_server.reply(Reply.from_corpus(CORPUS, "openai/chat_text_include_usage"))
    assert len(await openai_text(provider_server)) > 0
    provider_server.reply(Reply.from_corpus(CORPUS, "errors/openai_429_insufficient_quota"))
    with pytest.raises(openai.RateLimitError) as info:
        await openai_text(provider_server)
    assert info.value.code == "insufficient_quota"


@requires_corpus
async def test_corpus_anthropic_stream_and_error(provider_server):
    provider_server.reply(Reply.from_corpus(CORPUS, "anthropic/text_short"))
    client = anthropic_client(provider_server)
    async with client.messages.stream(model="c", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as s:
        text = "".join([t async for t in s.text_stream])
    assert text
    provider_server.reply(Reply.from_corpus(CORPUS, "errors/anthropic_404_not_found_model"))
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}], stream=True)
    await client.close()


@requires_corpus
async def test_corpus_gemini_stream_and_error(provider_server):
    provider_server.reply(Reply.from_corpus(CORPUS, "gemini/text_basic"))
    client = genai_client(provider_server)
    texts = [c.text or "" async for c in await client.aio.models.generate_content_stream(model="g", contents="hi")]
    assert "".join(texts)
    provider_server.reply(Reply.from_corpus(CORPUS, "errors/gemini_429_resource_exhausted_quota_retryinfo"))
    with pytest.raises(genai_errors.ClientError) as info:
        async for _ in await client.aio.models.generate_content_stream(model="g", contents="hi"):
            pass
    assert info.value.code == 429
    await client.aio.aclose()
