"""Today's flagship models answer through the bot, with their tools, their reasoning shown
and their sources, against fakes that enforce what each provider documents.

Each test is a server set to one flagship, with reasoning "high" and web search on, and a
question the model answers in two rounds: it reasons, calls one of the bot's tools
(`current_time`), and after the result searches the web and answers with citations. The
replay server enforces the provider's rules (tests/support/rules_*.py): OpenAI refuses
function tools next to reasoning on Chat Completions and checks the stateless replay on
the Responses API; Anthropic API 2026-10-21 refuses sampling parameters and streams empty
thinking unless asked to summarize it; Gemini checks the server-side search parts come
back. So an answer arrives only when every request of the turn is one the provider takes.
The answer shows: the tool's round (the second request carries the tool result), the
reasoning (the thought-log post and the Reasoning button) and the sources line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot import repo
from tests.capabilities.answer_controls.test_answer_controls import (
    button,
    carrying,
    ephemeral_texts,
)
from tests.support import data_anthropic_search as claude_search
from tests.support import data_openai_responses as openai_data
from tests.support.check_answers import answer_embeds
from tests.support.data_anthropic import SIGNATURE, a_thinking_block, a_tool_block, anthropic_events
from tests.support.data_gemini import g_chunk, gemini_body
from tests.support.data_gemini_search import GEMINI_GROUNDED, search_then_call
from tests.support.drive_commands import command, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.rules_anthropic import AnthropicRules
from tests.support.rules_gemini import GeminiRules
from tests.support.rules_openai import ChatCompletionsToolsWithReasoning, ResponsesRules
from tests.turn.test_turn_discord import ask

THOUGHT = "First the time in Tokyo, then the news."
TOKYO = '{"timezone": "Asia/Tokyo"}'
QUESTION = "what time is it in Tokyo, and what happened there today?"


def default_route(server: ProviderReplayServer, provider: str, model: str, path: str = "") -> dict[str, str]:
    return {"DEFAULT_TEXT_PROVIDER": provider, "DEFAULT_TEXT_MODEL": model, "WEB_SEARCH": "true",
            "DEFAULT_TEXT_BASE_URL": f"{server.url}{path}", "DEFAULT_TEXT_API_KEYS": "sk-env-flagship"}


def final_answer(fake: FakeDiscord) -> str:
    return "\n".join(m.content for m in fake.bot_messages(fake.channel_id, ephemeral=False)
                     if not m.deleted and m.webhook_token is None)


async def answered_with_everything(fake: FakeDiscord, run: Any, bot: Any, expect: Callable[[str], bool]) -> None:
    """Ask, wait for the answer and its sources line, then read its reasoning both ways."""
    question = await ask(fake, QUESTION)
    await run.wait_for(lambda: expect(final_answer(fake)) and "-# Sources:" in final_answer(fake), timeout=15)
    await run.wait_for(lambda: bool(fake.bot_messages(fake.thought_channel_id)))
    assert THOUGHT in fake.bot_messages(fake.thought_channel_id)[0].embeds[0]["description"]
    why = button(fake, "why", question)
    await run.wait_for(lambda: carrying(fake, why) is not None)
    await fake.press(carrying(fake, why).id, why)
    await run.wait_for(lambda: any(THOUGHT in text for text in ephemeral_texts(fake)))
    assert answer_embeds(fake) == [] and fake.rate_limited == []


async def set_up(bot: Any, run: Any, fake: FakeDiscord) -> None:
    async with bot.sessions() as session, session.begin():
        await repo.set_thought_log_channel(session, int(fake.guild_id), int(fake.thought_channel_id))
    await command(run, fake, "model", sub("params", opt("reasoning", "high")))


async def test_gpt_5_6_terra_answers_on_the_responses_api(fake_discord: FakeDiscord, turn_bot) -> None:
    ev = openai_data
    call_round = ev.sse_body([ev.created(), *ev.reasoning(0, [[THOUGHT]]),
                              *ev.function_call(1, "call_tokyo", "current_time", [TOKYO]),
                              ev.completed(ev.usage(40, 30, reasoning=20))])
    url = "https://www3.nhk.or.jp/news/"
    answer_round = ev.sse_body([ev.created(), *ev.web_search(0, "Tokyo news today"),
                                *ev.message(1, ["It is evening in Tokyo; ", "the news is calm."], item="msg_2"),
                                ev.citation(1, url, "NHK News", item="msg_2"),
                                ev.completed(ev.usage(90, 20))])
    rules = [ChatCompletionsToolsWithReasoning(), ResponsesRules()]
    async with ProviderReplayServer(rules=rules) as server:
        server.enqueue(Reply(body=call_round), Reply(body=answer_round))
        bot = turn_bot(**default_route(server, "openai", "gpt-5.6-terra", "/v1"))
        async with running_bot(fake_discord, bot) as run:
            await set_up(bot, run, fake_discord)
            await answered_with_everything(fake_discord, run, bot,
                                           lambda text: "the news is calm." in text and f"<{url}>" in text)
        first, second = server.requests
    assert first.path == second.path == "/v1/responses"
    assert first.json["reasoning"] == {"effort": "high", "summary": "auto"} and first.json["store"] is False
    assert {"type": "web_search"} in first.json["tools"]
    assert any(tool.get("name") == "current_time" for tool in first.json["tools"])
    kinds = [item.get("type") for item in second.json["input"]]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"]  # replayed statelessly
    assert second.json["input"][-3]["encrypted_content"] == "gAAAA-enc-1"


async def test_claude_opus_4_7_answers_with_its_thinking_summarized(fake_discord: FakeDiscord, turn_bot) -> None:
    call_round = anthropic_events([a_thinking_block(0, [THOUGHT], SIGNATURE),
                                   a_tool_block(1, "toolu_tokyo", "current_time", [TOKYO])], "tool_use", 30)
    async with ProviderReplayServer(rules=[AnthropicRules()]) as server:
        server.enqueue(Reply.named_sse(call_round), Reply.named_sse(claude_search.SEARCH_EVENTS))
        bot = turn_bot(**default_route(server, "anthropic", "claude-opus-4-7"))
        async with running_bot(fake_discord, bot) as run:
            await set_up(bot, run, fake_discord)
            await answered_with_everything(fake_discord, run, bot,
                                           lambda text: f"<{claude_search.SHANNON_WIKI}>" in text)
        first, second = server.requests
    assert first.json["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "temperature" not in first.json and "top_p" not in first.json
    assert any(tool.get("type") == "web_search_20250305" for tool in first.json["tools"])
    replayed = second.json["messages"][-2]["content"]  # the assistant's turn: thinking, then the call
    assert [block["type"] for block in replayed] == ["thinking", "tool_use"]
    assert replayed[0]["signature"] == SIGNATURE and replayed[0]["thinking"] == THOUGHT


async def test_gemini_3_answers_with_search_beside_its_tools(fake_discord: FakeDiscord, turn_bot) -> None:
    thinking = gemini_body([g_chunk([{"text": THOUGHT, "thought": True}])])
    call_round = thinking + search_then_call("current_time", {"timezone": "Asia/Tokyo"})
    gemini = GeminiRules()
    async with ProviderReplayServer(rules=[gemini]) as server:
        server.enqueue(Reply(body=call_round), Reply(body=GEMINI_GROUNDED))
        bot = turn_bot(**default_route(server, "google", "gemini-3-flash-preview"))
        async with running_bot(fake_discord, bot) as run:
            await set_up(bot, run, fake_discord)
            await answered_with_everything(fake_discord, run, bot, lambda text: "Spain won Euro 2024" in text)
        first, second = server.requests
    assert first.json["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high", "includeThoughts": True}
    assert {"googleSearch": {}} in first.json["tools"]
    assert first.json["toolConfig"] == {"includeServerSideToolInvocations": True}
    assert any("functionResponse" in part for turn in second.json["contents"] for part in turn["parts"])
    [check] = gemini.circulation
    assert check.kept, check  # the server-side search parts came back, in order, signed
