"""The tool loop and the follow-up interrupt inside the real bot: the openai SDK against
the replay server (a custom endpoint), discord.py against the fake Discord."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from providers.i18n import t
from tests.support.check_answers import INDICATOR, answer_embeds, delivered, plain_answer_messages
from tests.support.data_errors import openai_error
from tests.support.data_openai import openai_stream
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_personal, configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.turn.test_turn_discord import ask


def tool_call_stream(name: str, arguments: str, *, call_id: str = "call_1", text: str = "") -> Reply:
    """An OpenAI chat.completion.chunk stream whose answer is one tool call (arguments in two pieces)."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-tool", "object": "chat.completion.chunk", "created": 1700000000,
                "model": "model-a", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    half = len(arguments) // 2
    events = [chunk({"role": "assistant", "content": text})]
    events.append(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                         "function": {"name": name, "arguments": arguments[:half]}}]}))
    events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}))
    events.append(chunk({}, "tool_calls"))
    return Reply.sse(events)


def tool_messages(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The assistant tool_calls message and the tool result that follow the question."""
    assistant, tool = body["messages"][-2:]
    assert assistant["role"] == "assistant" and tool["role"] == "tool"
    return assistant, tool


async def test_current_time_call_is_answered_and_the_model_answers_in_one_reply(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "It is evening in Tokyo."
    server.enqueue(tool_call_stream("current_time", '{"timezone": "Asia/Tokyo"}', text="Let me check. "),
                   openai_stream(text, piece=7))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "what time is it in Tokyo?")
        await run.wait_for(lambda: delivered(fake, "Let me check. " + text))
    first, second = (r.json for r in server.requests)
    assert [tool["function"]["name"] for tool in first["tools"]] == [
        "current_time", "roll_dice", "recent_channel_messages"]
    assistant, tool = tool_messages(second)
    [call] = assistant["tool_calls"]
    assert call["id"] == "call_1" and call["function"]["name"] == "current_time"
    assert json.loads(call["function"]["arguments"]) == {"timezone": "Asia/Tokyo"}
    assert tool["tool_call_id"] == "call_1"
    result = json.loads(tool["content"])["result"]
    assert result["timezone"] == "Asia/Tokyo" and result["utc_offset"] == "+0900"
    assert second["tools"] == first["tools"]
    [answer] = plain_answer_messages(fake)  # one reply, continued: nothing deleted, nothing doubled
    assert answer.content == "Let me check. " + text
    assert not any(m.deleted for m in fake.bot_messages(fake.channel_id)) and answer_embeds(fake) == []


async def test_truncated_call_is_refused_and_unknown_tool_names_the_available_ones(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, caplog) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(tool_call_stream("current_time", '{"timezone": "Eur'),
                   tool_call_stream("weather", '{"city": "Paris"}', call_id="call_2"),
                   openai_stream("Sorry, I cannot tell.", piece=50))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "time in Europe?")
        await run.wait_for(lambda: delivered(fake, "Sorry, I cannot tell."))
    assert len(server.requests) == 3
    _, refused = tool_messages(server.requests[1].json)
    error = json.loads(refused["content"])["error"]
    assert error["type"] == "tool_execution_failed" and "truncated" in error["message"]
    assert any(r.levelname == "ERROR" and "truncated" in r.getMessage() for r in caplog.records)
    _, unknown = tool_messages(server.requests[2].json)
    assert unknown["tool_call_id"] == "call_2"
    error = json.loads(unknown["content"])["error"]
    assert error["type"] == "unknown_tool"
    assert error["available_tools"] == ["current_time", "roll_dice", "recent_channel_messages"]
    assert [m.content for m in plain_answer_messages(fake)] == ["Sorry, I cannot tell."]


async def test_iteration_bound_asks_once_without_tools_then_ends_with_a_notice(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(tool_call_stream("roll_dice", '{"notation": "1d6"}'))  # a model that never stops
    notice = t("chat.tool_limit_reached", "en")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "roll forever")
        await run.wait_for(lambda: any(notice in m.content for m in plain_answer_messages(fake)))
        await asyncio.sleep(0.2)
    bodies = [r.json for r in server.requests]
    assert len(bodies) == 6  # the question, then five tool iterations
    assert all(body.get("tools") for body in bodies[:5]) and not bodies[5].get("tools")
    results = [m for m in bodies[5]["messages"] if m["role"] == "tool"]
    assert len(results) == 5
    for message in results:
        rolled = json.loads(message["content"])["result"]
        assert 1 <= rolled["total"] <= 6
    assert [m.content for m in plain_answer_messages(fake)] == [notice]
    assert answer_embeds(fake) == []


async def test_same_member_asking_again_interrupts_the_streaming_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    slow = "This first answer streams slowly and will be cut short by a newer question. " * 3
    fresh = "Here is the answer to the new question."
    server.enqueue(openai_stream(slow, piece=5, event_delay=0.05), openai_stream(fresh, piece=10))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "tell me something long")
        await run.wait_for(lambda: bool(plain_answer_messages(fake)) and len(plain_answer_messages(fake)[0].content) > 20)
        await ask(fake, "actually, something else")
        await run.wait_for(lambda: len(plain_answer_messages(fake)) == 2 and plain_answer_messages(fake)[1].content == fresh)
        await run.wait_for(lambda: INDICATOR not in plain_answer_messages(fake)[0].content)
        await asyncio.sleep(0.2)
    first, second = plain_answer_messages(fake)
    assert 0 < len(first.content) < len(slow.strip())  # what was said stays, the rest never came
    assert slow.startswith(first.content)
    assert second.content == fresh
    assert answer_embeds(fake) == [] and len(server.requests) == 2
    assert not any(m.deleted for m in fake.bot_messages(fake.channel_id))


def anthropic_tool_use(name: str, arguments: str, call_id: str = "toolu_1") -> Reply:
    """An Anthropic Messages stream whose answer is one tool_use block."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-personal",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    return Reply.named_sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta", "partial_json": arguments}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": {"output_tokens": 12}}),
        ("message_stop", {"type": "message_stop"}),
    ])


async def test_consecutive_tool_errors_end_an_anthropic_turn_with_a_notice(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(anthropic_tool_use("weather", '{"city": "Oslo"}'))  # an unknown tool, every time
    notice = t("chat.tool_limit_reached", "en")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_personal(bot, fake, "sk-ant-personal-9f2e")
        await ask(fake, "weather in Oslo?")
        await run.wait_for(lambda: any(notice in m.content for m in plain_answer_messages(fake)))
        await asyncio.sleep(0.2)
    bodies = [r.json for r in server.requests]
    # Three consecutive failed calls; Anthropic cannot read tool history without the tool
    # list, so the turn ends with the notice instead of a request without tools.
    assert len(bodies) == 3 and all(body["tools"] for body in bodies)
    assert [tool["name"] for tool in bodies[0]["tools"]] == [
        "current_time", "roll_dice", "recent_channel_messages"]
    assert "$defs" not in json.dumps(bodies[0]["tools"])
    assistant, results = bodies[1]["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert [b for b in assistant["content"] if b["type"] == "tool_use"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}]
    [result] = [b for b in results["content"] if b["type"] == "tool_result"]
    assert result["tool_use_id"] == "toolu_1"
    content = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert json.loads(content)["error"]["type"] == "unknown_tool"
    assert [m.content for m in plain_answer_messages(fake)] == [notice] and answer_embeds(fake) == []


async def test_another_member_asking_does_not_interrupt(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    first_text = "The first member's answer arrives in full, piece by piece."
    other_text = "The owner's own answer."
    server.enqueue(openai_stream(first_text, piece=3, event_delay=0.05), openai_stream(other_text))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "a question")
        await run.wait_for(lambda: bool(plain_answer_messages(fake)))
        await fake.send_user_message(f"<@{fake.bot_user['id']}> mine", author=fake.owner, mention_bot=True)
        await run.wait_for(lambda: sorted(m.content for m in plain_answer_messages(fake)) == sorted([first_text, other_text]))
    assert answer_embeds(fake) == [] and len(server.requests) == 2


async def test_a_failure_after_the_tools_ran_is_shown_in_place_not_retried(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.enqueue(tool_call_stream("roll_dice", '{"notation": "2d6"}', text="Rolling. "),
                   openai_error(429, "Rate limit reached for requests", code="rate_limit_exceeded"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "roll 2d6")
        await run.wait_for(lambda: bool(answer_embeds(fake)))
        await asyncio.sleep(0.3)
    assert [r.api_key for r in server.requests] == ["sk-pool-first", "sk-pool-first"]
    [embed] = answer_embeds(fake)
    assert embed["title"] == t("genai.stream.rate_limit_title", "en")  # the turn's renderer, in place
    assert "sk-pool" not in str(embed)
    [answer] = plain_answer_messages(fake)
    assert answer.content.startswith("Rolling.") and INDICATOR not in answer.content
    assert not any(m.deleted for m in fake.bot_messages(fake.channel_id))
