"""Continue: an answer cut by the output-token cap goes back as the assistant's turn
(`Message.partial_answer`) in each family's own form, and the stream carries only the
new text. The request bodies the replay server received through the real openai,
anthropic and google-genai SDKs (providers/continuation.py)."""

from __future__ import annotations

from typing import Any

import pytest

from providers import ChatRequest, Message
from providers.continuation import CONTINUE_ASK
from providers.types import FunctionCall
from tests.support import data_openai_responses as rx
from tests.support.data_anthropic import a_text_block, anthropic_events
from tests.support.data_gemini import g_chunk, gemini_body
from tests.support.data_openai import openai_events
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import Reply

PARTIAL = "The three steps are:\n\n1. Mix the flour and "
NEW_TEXT = "water.\n2. Knead.\n3. Bake."
QUESTION = Message("user", "How do I bake bread?", name="alice")
OPENAI_FAMILY = ["custom", "deepseek", "openrouter", "zai"]  # chat completions; OpenAI's Responses below
PREFILL_CLAUDE = "claude-sonnet-4-5-20250929"  # takes a prefill when not thinking
NO_PREFILL_CLAUDE = ["claude-opus-4-6", "claude-sonnet-5", "claude-fable-5-1", "claude-test"]


def request(continued: bool, partial: str = PARTIAL, **settings: Any) -> ChatRequest:
    answer = Message("assistant", partial, partial_answer=continued)
    return ChatRequest(messages=[QUESTION, answer], system="You are Bot.", max_output_tokens=64, **settings)


def openai_reply() -> Reply:
    return Reply.sse(openai_events([NEW_TEXT[:6], NEW_TEXT[6:]]))


def responses_reply() -> Reply:
    return Reply(body=rx.sse_body(rx.responses_events([NEW_TEXT[:6], NEW_TEXT[6:]])))


def anthropic_reply() -> Reply:
    return Reply.named_sse(anthropic_events([a_text_block(0, [NEW_TEXT[:6], NEW_TEXT[6:]])], "end_turn", 9))


def gemini_reply() -> Reply:
    return Reply(body=gemini_body([g_chunk([{"text": NEW_TEXT[:6]}]),
                                   g_chunk([{"text": NEW_TEXT[6:]}], finish="STOP")]))


async def sent(server, provider: str, reply: Reply, chat: ChatRequest, **options: Any) -> dict[str, Any]:
    """The body the SDK sent for `chat`."""
    await served_outcome(server, provider, reply, chat, **options)
    return server.requests[-1].json


def test_only_an_assistant_turn_can_be_a_partial_answer():
    for role in ("user", "system", "tool"):
        with pytest.raises(ValueError, match="partial answer"):
            Message(role, "x", partial_answer=True)
    assert Message("assistant", "x", partial_answer=True).partial_answer


# OpenAI-compatible: the assistant turn, then a user turn asking to go on.

@pytest.mark.parametrize("provider", OPENAI_FAMILY)
async def test_openai_family_asks_to_continue_after_the_partial_answer(provider_server, provider):
    plain = await sent(provider_server, provider, openai_reply(), request(False))
    continued = await sent(provider_server, provider, openai_reply(), request(True))
    assert plain["messages"][-1] == {"role": "assistant", "content": PARTIAL}  # as today
    assert continued["messages"][-2:] == [{"role": "assistant", "content": PARTIAL},
                                          {"role": "user", "content": CONTINUE_ASK}]
    assert continued["messages"][:-1] == plain["messages"]
    assert {k: v for k, v in continued.items() if k != "messages"} == \
        {k: v for k, v in plain.items() if k != "messages"}


async def test_openai_family_keeps_the_ask_when_a_tool_loop_follows(provider_server):
    """The tool loop appends turns after the partial answer; the ask stays where it was."""
    call = FunctionCall("look", {"at": 1}, id="call_1")
    messages = [*request(True).messages, Message("assistant", "", tool_calls=[call]),
                Message("tool", '{"seen": "a cat"}', tool_call_id="call_1", name="look")]
    body = await sent(provider_server, "openrouter", openai_reply(), ChatRequest(messages=messages))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "tool"]
    assert body["messages"][2]["content"] == CONTINUE_ASK


@pytest.mark.parametrize("provider", ["custom", "deepseek"])
async def test_openai_family_streams_only_the_new_text(provider_server, provider):
    outcome = await served_outcome(provider_server, provider, openai_reply(), request(True))
    assert outcome.text == NEW_TEXT and outcome.done.finish_reason == "stop"


# OpenAI on the Responses API: no prefill either, so the same ask as an input item.
ASK_ITEM = {"role": "user", "content": CONTINUE_ASK}


async def test_openai_asks_to_continue_after_the_partial_answer(provider_server):
    plain = await sent(provider_server, "openai", responses_reply(), request(False), model="gpt-5")
    continued = await sent(provider_server, "openai", responses_reply(), request(True), model="gpt-5")
    assert plain["input"][-1] == {"role": "assistant", "content": PARTIAL}
    assert continued["input"][-2:] == [{"role": "assistant", "content": PARTIAL}, ASK_ITEM]
    assert continued["input"][:-1] == plain["input"]
    assert {k: v for k, v in continued.items() if k != "input"} == {k: v for k, v in plain.items() if k != "input"}


async def test_openai_keeps_the_ask_when_a_tool_loop_follows(provider_server):
    call = FunctionCall("look", {"at": 1}, id="call_1")
    messages = [*request(True).messages, Message("assistant", "", tool_calls=[call]),
                Message("tool", '{"seen": "a cat"}', tool_call_id="call_1", name="look")]
    body = await sent(provider_server, "openai", responses_reply(), ChatRequest(messages=messages))
    assert [item.get("role", item.get("type")) for item in body["input"]] == [
        "user", "assistant", "user", "function_call", "function_call_output"]
    assert body["input"][2] == ASK_ITEM


async def test_openai_streams_only_the_new_text(provider_server):
    outcome = await served_outcome(provider_server, "openai", responses_reply(), request(True))
    assert outcome.text == NEW_TEXT and outcome.done.finish_reason == "stop"


# Anthropic: a prefill (the request ends with the assistant turn, trailing whitespace
# stripped) where the model takes one; otherwise the OpenAI-compatible form.

async def test_anthropic_prefills_the_partial_answer_without_trailing_whitespace(provider_server):
    plain = await sent(provider_server, "anthropic", anthropic_reply(), request(False), model=PREFILL_CLAUDE)
    continued = await sent(provider_server, "anthropic", anthropic_reply(), request(True), model=PREFILL_CLAUDE)
    assert plain["messages"][-1] == {"role": "assistant", "content": [{"type": "text", "text": PARTIAL}]}
    assert continued["messages"][-1] == {"role": "assistant",
                                         "content": [{"type": "text", "text": PARTIAL.rstrip()}]}
    assert continued["messages"][:-1] == plain["messages"][:-1]
    assert {k: v for k, v in continued.items() if k != "messages"} == \
        {k: v for k, v in plain.items() if k != "messages"}


@pytest.mark.parametrize("model", NO_PREFILL_CLAUDE)
async def test_anthropic_asks_to_continue_where_the_model_takes_no_prefill(provider_server, model):
    """Claude 4.6 and later refuse a prefill; a name without a version is not risked."""
    body = await sent(provider_server, "anthropic", anthropic_reply(), request(True), model=model)
    assert body["messages"][-2:] == [
        {"role": "assistant", "content": [{"type": "text", "text": PARTIAL}]},
        {"role": "user", "content": [{"type": "text", "text": CONTINUE_ASK}]},
    ]


async def test_anthropic_with_thinking_asks_to_continue_instead_of_prefilling(provider_server):
    """Prefill is not available with extended thinking."""
    body = await sent(provider_server, "anthropic", anthropic_reply(), request(True, reasoning_effort="high"),
                      model=PREFILL_CLAUDE)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert body["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": CONTINUE_ASK}]}
    assert body["messages"][-2]["content"] == [{"type": "text", "text": PARTIAL}]


async def test_anthropic_whitespace_only_partial_answer_leaves_no_empty_prefill(provider_server):
    body = await sent(provider_server, "anthropic", anthropic_reply(), request(True, partial=" \n"),
                      model=PREFILL_CLAUDE)
    assert [turn["role"] for turn in body["messages"]] == ["user"]


async def test_anthropic_streams_only_the_new_text(provider_server):
    outcome = await served_outcome(provider_server, "anthropic", anthropic_reply(), request(True),
                                   model=PREFILL_CLAUDE)
    assert outcome.text == NEW_TEXT and outcome.done.finish_reason == "stop"


# Gemini: the contents end with the model turn, which Gemini continues.

async def test_gemini_contents_end_with_the_model_turn(provider_server):
    plain = await sent(provider_server, "google", gemini_reply(), request(False), model="gemini-2.5-flash")
    continued = await sent(provider_server, "google", gemini_reply(), request(True), model="gemini-2.5-flash")
    assert continued["contents"][-1] == {"role": "model", "parts": [{"text": PARTIAL}]}
    assert continued == plain


async def test_gemini_streams_only_the_new_text(provider_server):
    outcome = await served_outcome(provider_server, "google", gemini_reply(), request(True),
                                   model="gemini-2.5-flash")
    assert outcome.text == NEW_TEXT and outcome.done.finish_reason == "stop"
