"""Today's provider rules end to end: a real turn of the bot (discord.py against the fake
Discord, the operator's default route) against a replay server that enforces what each
provider documents (tests/support/rules_*.py). Each answer arrives only when every request
of the turn was one the provider takes; the adapter tests show the old shapes refused
(tests/adapters/test_anthropic_api_version.py, test_gemini_rules.py, test_reasoning_replay.py).

Every Discord test ends with no 429."""

from __future__ import annotations

import pytest

from bot import repo
from tests.support.check_answers import INDICATOR, answer_embeds, delivered, plain_answer_messages
from tests.support.data_anthropic import SIGNATURE, a_text_block, a_thinking_block, anthropic_events
from tests.support.data_gemini import GEMINI_THINK_TEXT
from tests.support.data_gemini_search import SEARCH_CALL_PART, SEARCH_RESULT_PART, search_then_call
from tests.support.data_openai import chunk, sse_body, tool_delta, usage_chunk
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_anthropic import SAMPLING, AnthropicRules
from tests.support.rules_chat import DeepSeekRules
from tests.support.rules_gemini import GeminiRules
from tests.turn.test_turn_discord import ask

THOUGHT = "The member wants a greeting."


def default_route(server: ProviderReplayServer, provider: str, model: str, path: str = "") -> dict[str, str]:
    return {"DEFAULT_TEXT_PROVIDER": provider, "DEFAULT_TEXT_MODEL": model,
            "DEFAULT_TEXT_BASE_URL": f"{server.url}{path}", "DEFAULT_TEXT_API_KEYS": "sk-env-rules"}


def answered(fake: FakeDiscord, text: str) -> bool:
    """The answer is on Discord, whole (the command's own reply left aside)."""
    return [m.content for m in plain_answer_messages(fake) if INDICATOR not in m.content] == [text]


@pytest.fixture
async def rules_server():
    """One replay server for every family, each rule looking only at its own requests."""
    gemini = GeminiRules()
    async with ProviderReplayServer(rules=[AnthropicRules(), gemini, DeepSeekRules()]) as server:
        yield server, gemini


async def test_claude_opus_4_7_gets_no_temperature_and_shows_its_thinking(
        fake_discord: FakeDiscord, rules_server, turn_bot) -> None:
    """The server set a temperature and high reasoning: Claude gets neither a sampling
    parameter (a 400 at API version 2026-10-21) nor thinking without `display` (empty from
    Opus 4.7), so the answer comes in one request and its thinking reaches the thought log."""
    fake, (server, _) = fake_discord, rules_server
    server.reply(Reply.named_sse(anthropic_events(
        [a_thinking_block(0, [THOUGHT], SIGNATURE), a_text_block(1, ["Hello there."])], "end_turn", 20)))
    bot = turn_bot(**default_route(server, "anthropic", "claude-opus-4-7"))
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_thought_log_channel(session, int(fake.guild_id), int(fake.thought_channel_id))
        await command(run, fake, "model", sub("params", opt("temperature", 0.3), opt("reasoning", "high")))
        await ask(fake, "say hello")
        await run.wait_for(lambda: answered(fake, "Hello there."))
        await run.wait_for(lambda: bool(fake.bot_messages(fake.thought_channel_id)))
    [sent] = server.requests  # taken as sent: nothing refused, nothing healed
    assert not set(SAMPLING) & set(sent.json)
    assert sent.json["thinking"] == {"type": "adaptive", "display": "summarized"}
    [post] = fake.bot_messages(fake.thought_channel_id)
    assert THOUGHT in post.embeds[0]["description"]
    assert answer_embeds(fake) == [] and fake.rate_limited == []


async def test_a_deepseek_tool_round_whose_reasoning_was_empty_is_taken(
        fake_discord: FakeDiscord, rules_server, turn_bot) -> None:
    """deepseek-v4 thinks by default; its call came with no reasoning at all: the tool
    loop's next request carries the turn's `reasoning_content` empty, which DeepSeek takes."""
    fake, (server, _) = fake_discord, rules_server
    call = sse_body([chunk({"role": "assistant", "content": None}),
                     chunk({"tool_calls": [tool_delta(0, id="call_0", name="current_time",
                                                      arguments='{"timezone": "Asia/Tokyo"}')]}),
                     chunk({"content": ""}, "tool_calls"), usage_chunk()])
    server.enqueue(Reply(body=call), Reply(body=sse_body([chunk({"role": "assistant", "content": "It is evening."}),
                                                          chunk({}, "stop"), usage_chunk()])))
    bot = turn_bot(**default_route(server, "deepseek", "deepseek-v4-flash", "/v1"))
    async with running_bot(fake, bot) as run:
        await ask(fake, "what time is it in Tokyo?")
        await run.wait_for(lambda: delivered(fake, "It is evening."))
    first, second = (request.json for request in server.requests)
    assistant = [m for m in second["messages"] if m["role"] == "assistant"][-1]
    assert assistant["tool_calls"][0]["function"]["name"] == "current_time"
    assert assistant["reasoning_content"] == ""
    assert answer_embeds(fake) == [] and fake.rate_limited == []


async def test_gemini_3_5_searches_beside_the_tools_and_gets_its_search_back_in_the_next_round(
        fake_discord: FakeDiscord, rules_server, turn_bot) -> None:
    """Google Search next to the bot's tools: the search the API ran comes back, in order and
    signed, ahead of the call it led to; the thinking level goes as a level."""
    fake, (server, gemini) = fake_discord, rules_server
    server.enqueue(Reply(body=search_then_call("current_time", {"timezone": "Asia/Tokyo"})),
                   Reply(body=GEMINI_THINK_TEXT))
    bot = turn_bot(**default_route(server, "google", "gemini-3.5-flash"), WEB_SEARCH="true")
    async with running_bot(fake, bot) as run:
        await command(run, fake, "model", sub("params", opt("reasoning", "high")))
        await ask(fake, "who won euro 2024, and what time is it in Tokyo?")
        await run.wait_for(lambda: answered(fake, "Let me check. The sky is blue."))
    first, second = (request.json for request in server.requests)
    assert {"googleSearch": {}} in first["tools"] and first["toolConfig"] == {"includeServerSideToolInvocations": True}
    assert first["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high", "includeThoughts": True}
    model_turn = second["contents"][1]
    assert model_turn["parts"][:2] == [SEARCH_CALL_PART, SEARCH_RESULT_PART]
    [check] = gemini.circulation
    assert check.kept, check
    assert answer_embeds(fake) == [] and fake.rate_limited == []
