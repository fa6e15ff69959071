"""Web search in the turn: each native family's citations give the sources line (through
the real SDK, the stream layer and the turn's notes), the bot-side `web_search` tool runs
through the loop against a fake search service inside the real bot, nothing searches when
search is off, and the searches are counted.

Every Discord test ends with no 429."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.capabilities.web_search.answer import AnswerSearch
from bot.capabilities.web_search.notes import search_notes
from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.capabilities.web_search.tool import SEARCHES_USED_UP
from bot.db.models import SearchDay, UsageDay
from bot.repo.capability_settings import set_values
from bot.repo.keys import add_server_key
from bot.repo.servers import set_text_model
from bot.repo.usage import set_limits
from bot.turn.seams import TurnEnding
from providers import ChatRequest, Message, WebSearch, create_adapter, normalized_stream
from providers.i18n import t
from providers.types import Source
from stream.buffer import MessageDelivery
from stream.orchestrator import run_stream
from stream.sink import FINAL, EmbedSpec, SentMessage, Write
from tests.support import data_anthropic_search as anthropic_search
from tests.support import data_gemini_search as gemini_search
from tests.support import data_openai_responses as responses_data
from tests.support import data_openai_search as openai_search
from tests.support.data_openai import chunk, openai_stream, tool_delta
from tests.support.drive_adapter import connection
from tests.support.drive_discord_client import running_bot
from tests.support.env_bot_config import configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.fake_search_service import FakeSearchService


class Screen:
    """A sink that only remembers what each message shows."""

    def __init__(self) -> None:
        self.shown: dict[int, str] = {}

    async def send(self, content: str, *, reply: bool = False, write: Write = FINAL) -> SentMessage:
        message = SentMessage(len(self.shown) + 1)
        self.shown[message.id] = content
        return message

    async def edit(self, message: SentMessage, content: str, *, write: Write = FINAL) -> None:
        self.shown[message.id] = content

    async def delete(self, message: SentMessage) -> None:
        self.shown.pop(message.id, None)

    async def send_embed(self, embed: EmbedSpec, *, reply: bool = False) -> SentMessage:
        return await self.send(embed.title)

    async def send_file(self, filename: str, data: bytes, *, embed: EmbedSpec | None = None) -> SentMessage:
        return await self.send(filename)

    async def typing(self) -> None:
        return None

    def rate_limit(self) -> None:
        return None


def no_limits() -> AnswerSearch:
    async def allowed(paid_by: str) -> bool:
        return True

    async def left(paid_by: str) -> int | None:
        return None

    return AnswerSearch(3, allowed, left)


FAMILIES = {
    "gemini": ("google", Reply(body=gemini_search.GEMINI_GROUNDED), gemini_search.EXPECTED),
    "anthropic": ("anthropic", Reply.named_sse(anthropic_search.SEARCH_EVENTS),
                  [Source(anthropic_search.SHANNON_WIKI, anthropic_search.SHANNON_WIKI_TITLE),
                   Source(anthropic_search.SHANNON_BRIT, anthropic_search.SHANNON_BRIT_TITLE)]),
    "openrouter": ("openrouter", Reply.sse(openai_search.OPENROUTER_CITED),
                   [Source(url, title) for url, title in openai_search.CITED]),
    # OpenAI's Responses API: a recorded searched answer (tests/fixtures/openai_responses).
    "openai": ("openai", Reply(body=responses_data.recorded("web_search_citations")),
               responses_data.cited_once("web_search_citations")),
}


# Each family's search field in the body its SDK sent (the question's words are not looked at).
SEARCH_FORM = {
    "gemini": lambda body: {"googleSearch": {}} in body.get("tools", []),
    "anthropic": lambda body: any(tool.get("type") == "web_search_20250305" for tool in body.get("tools", [])),
    # A model that takes tools (none listed otherwise) searches through the server tool; the
    # `web` plugin it replaced is not sent beside it.
    "openrouter": lambda body: "plugins" not in body and [tool["type"] for tool in body.get("tools", [])
                                                          ] == ["openrouter:web_search"],
    "openai": lambda body: {"type": "web_search"} in body.get("tools", []) and body["max_tool_calls"] == 3,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
async def test_each_native_familys_citations_give_the_sources_line(provider_server, family: str) -> None:
    provider, reply, expected = FAMILIES[family]
    provider_server.reply(reply)
    adapter = create_adapter(provider, timeout=10, **connection(provider, provider_server.url))
    screen = Screen()
    delivery = MessageDelivery(screen)
    request = ChatRequest(messages=[Message("user", "search, please")], web_search=WebSearch(3))
    try:
        result = await run_stream(normalized_stream(adapter, request), delivery)
    finally:
        await adapter.aclose()
    search = no_limits()
    await search_notes(TurnEnding("en", delivery, result), search)
    assert result.sources == expected  # each URL once, in citation order, with its title
    last = screen.shown[max(screen.shown)]
    line = last.rsplit("\n\n", 1)[1]
    assert line == "-# Sources: " + " · ".join(f"<{source.url}>" for source in expected[:5])
    assert result.text.strip().endswith(last.rsplit("\n\n", 1)[0].strip()[-20:])  # after the answer's end
    body = provider_server.requests[-1].json
    assert SEARCH_FORM[family](body)  # the family's own search form was sent


def tool_call_stream(query: str) -> Reply:
    call = [chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [tool_delta(0, id="call_1", name="web_search",
                                             arguments=json.dumps({"query": query}))]}),
            chunk({}, "tool_calls")]
    return Reply.sse(call)


def lines(fake: FakeDiscord) -> list[str]:
    return [m.content for m in fake.bot_messages(ephemeral=False) if m.content and not m.deleted
            and m.webhook_token is None]


@pytest.fixture
async def search_service():
    async with FakeSearchService() as service:
        yield service


def queries(service: FakeSearchService) -> list[str]:
    return [seen.query.get("q", "") for seen in service.requests]


async def enable_search(bot: Any, fake: FakeDiscord, enabled: bool = True) -> None:
    async with bot.sessions() as session, session.begin():
        await set_values(session, int(fake.guild_id), WEB_SEARCH, {"web_search": enabled, "max_searches": 3})
    await asyncio.sleep(0.2)


async def test_the_bot_side_search_runs_through_the_loop_and_ends_with_sources(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, search_service) -> None:
    """A custom endpoint (no native search) with SearXNG named: the model calls web_search,
    the fake service answers, the model's next request carries the framed results, the
    answer ends with the sources it cites, and the search is counted in usage."""
    fake, server = fake_discord, provider_server
    cited = search_service.pages[0].url
    server.enqueue(tool_call_stream("euro 2024 winner"),
                   openai_stream(f"Spain won ({cited})."))
    bot = turn_bot(SEARCH_BACKEND="searxng", SEARCH_URL=search_service.url)
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await enable_search(bot, fake)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> who won euro 2024?", mention_bot=True)
        await run.wait_for(lambda: any("-# Sources:" in line for line in lines(fake)), timeout=10)
        await asyncio.sleep(0.6)  # usage is written behind
        async with bot.sessions() as session:
            searches = await session.scalar(select(func.sum(UsageDay.searches)))
    first, second = server.requests[:2]
    assert any(tool["function"]["name"] == "web_search" for tool in first.json["tools"])
    assert "web_search" not in json.dumps(first.json.get("web_search_options", {}))
    results = [m for m in second.json["messages"] if m["role"] == "tool"]
    assert results and "SEARCH_RESULTS" in results[0]["content"] and cited in results[0]["content"]
    assert queries(search_service) == ["euro 2024 winner"]
    [answer] = [line for line in lines(fake) if line.startswith("Spain won")]
    assert answer.endswith(f"-# Sources: <{cited}>")
    assert searches == 1
    assert fake.rate_limited == []


async def test_no_search_of_any_kind_when_search_is_off(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, search_service) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("From what I know."))
    bot = turn_bot(SEARCH_BACKEND="searxng", SEARCH_URL=search_service.url)
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> anything new?", mention_bot=True)
        await run.wait_for(lambda: "From what I know." in lines(fake))
    [request] = server.requests
    assert all(tool["function"]["name"] != "web_search" for tool in request.json.get("tools", []))
    assert "web_search_options" not in request.json and "plugins" not in request.json
    assert not any("Sources" in line for line in lines(fake))
    assert fake.rate_limited == []


async def test_a_failing_search_service_does_not_fail_the_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, search_service) -> None:
    fake, server = fake_discord, provider_server
    search_service.fail(503)
    server.enqueue(tool_call_stream("anything"), openai_stream("I could not search, but here goes."))
    bot = turn_bot(SEARCH_BACKEND="searxng", SEARCH_URL=search_service.url)
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await enable_search(bot, fake)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> search it", mention_bot=True)
        await run.wait_for(lambda: any("not grounded" in line for line in lines(fake)), timeout=10)
    second = server.requests[1]
    tool_result = [m for m in second.json["messages"] if m["role"] == "tool"][0]["content"]
    assert "unavailable" in tool_result
    [answer] = [line for line in lines(fake) if line.startswith("I could not search")]
    assert "Sources" not in answer
    assert fake.rate_limited == []


async def test_a_members_daily_searches_bound_the_bot_side_search(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, search_service) -> None:
    """searches_per_day 1: the first search runs, the second is refused before the service
    is asked, the model is told and the answer says it is not fully grounded."""
    fake, server = fake_discord, provider_server
    server.enqueue(tool_call_stream("first"), tool_call_stream("second"), openai_stream("With one search."))
    bot = turn_bot(SEARCH_BACKEND="searxng", SEARCH_URL=search_service.url)
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        async with bot.sessions() as session, session.begin():
            await set_limits(session, int(fake.guild_id), searches_per_day=1)
        await enable_search(bot, fake)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> search twice", mention_bot=True)
        await run.wait_for(lambda: any("used up" in line for line in lines(fake)), timeout=10)
    assert queries(search_service) == ["first"]
    third = server.requests[2]
    refusal = [m for m in third.json["messages"] if m["role"] == "tool"][-1]["content"]
    assert json.loads(refusal) == {"result": SEARCHES_USED_UP}
    [answer] = [line for line in lines(fake) if line.startswith("With one search.")]
    assert f"-# {t('chat.search.limit', 'en')}" in answer
    assert fake.rate_limited == []


async def test_a_native_search_is_counted_in_the_members_day(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    """A server on Claude with web search on: the request carries the server tool, the
    answer shows its citations' sources line, and the provider's search is counted in
    the member's day (where a limit is set)."""
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(Reply.named_sse(anthropic_search.SEARCH_EVENTS))
    bot = turn_bot()
    guild = int(fake.guild_id)
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await set_text_model(session, guild, "anthropic", "claude-sonnet-4-5")
            await add_server_key(session, bot.vault, guild, "anthropic", "sk-ant-server-0001")
            await set_limits(session, guild, searches_per_day=5)
        await enable_search(bot, fake)
        await fake.send_user_message(f"<@{fake.bot_user['id']}> when was Shannon born?", mention_bot=True)
        await run.wait_for(lambda: any("-# Sources:" in line for line in lines(fake)), timeout=10)
        await asyncio.sleep(0.5)
        async with bot.sessions() as session:
            counted = await session.scalar(select(func.sum(SearchDay.searches)))
    [request] = server.requests
    assert [tool for tool in request.json["tools"] if tool.get("type", "").startswith("web_search")] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]
    [answer] = [line for line in lines(fake) if "-# Sources:" in line]
    assert answer.endswith(f"-# Sources: <{anthropic_search.SHANNON_WIKI}> · <{anthropic_search.SHANNON_BRIT}>")
    assert counted == 1
    assert fake.rate_limited == []
