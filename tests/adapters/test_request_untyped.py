"""The OpenAI-family body goes to the SDK untyped (`untyped_arguments`, which skips the
SDK's per-request walk of typed arguments) and arrives exactly as the typed call sends it:
both through the real openai SDK into the replay server, bodies compared."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from providers import ChatRequest, Message
from providers.capabilities import capabilities_of
from providers.model_capabilities import RouteHints
from providers.openai_compat.request import build_request, untyped_arguments
from providers.types import FunctionCall, ImagePart, TextPart, ToolSpec
from tests.support import data_openai as fx
from tests.support.fake_provider_server import Reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
RICH = ChatRequest(
    system="You are Bot on {server}.",
    messages=[
        Message("user", "what is in this picture?", name="alice"),
        Message("assistant", "", tool_calls=[FunctionCall("look", {"at": 1}, id="call_1")]),
        Message("tool", '{"seen": "a cat"}', tool_call_id="call_1", name="look"),
        Message("assistant", "A cat."),
        Message("user", [TextPart("and this one?"), ImagePart("image/png", PNG)], name="bob"),
    ],
    tools=[ToolSpec("look", "Look at something", {"type": "object", "properties": {"at": {"type": "integer"}}})],
    max_output_tokens=300,
    temperature=0.4,
    reasoning_effort="medium",
    extra={"user": "guild-1"},
)
CASES = [("openai", "o4-mini"), ("openai", "gpt-4o"), ("openrouter", "anthropic/claude-sonnet-4"),
         ("deepseek", "deepseek-v4-flash"), ("zai", "glm-4.6"), ("custom", "llama3")]


async def received(server, arguments: dict[str, Any]) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
    async with client.chat.completions.with_streaming_response.create(**arguments) as response:
        await response.read()
    await client.close()
    return server.requests[-1].json


@pytest.mark.parametrize(("provider", "model"), CASES, ids=[p for p, _ in CASES])
async def test_the_untyped_body_is_the_typed_body(provider_server, provider, model):
    provider_server.reply(Reply(body=fx.sse_body(fx.TEXT)))
    arguments = build_request(capabilities_of(provider, model, RouteHints(custom_reasoning_effort=True)), RICH)
    typed = await received(provider_server, arguments)
    untyped = await received(provider_server, untyped_arguments(arguments, openai.omit))
    assert untyped == typed
    assert typed["messages"] and typed["stream"] is True  # the placeholders were replaced
