"""Usage, limits and generation settings through the real LLMBot: the official SDKs
against the replay server, discord.py against the fake Discord, a real SQLite file."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from bot import repo
from bot.db.models import UsageDay
from providers.capabilities import capabilities_of
from providers.i18n import t
from tests.support import data_openai_responses as rx
from tests.support.data_openai import openai_stream
from tests.support.data_openai_responses import responses_stream
from tests.support.drive_commands import command, member, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import configure_personal, configure_server
from tests.support.env_corpus import CORPUS, requires_corpus
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply


@dataclass(frozen=True)
class Family:
    """One provider family on the operator's default route, pointed at the replay server."""

    provider: str
    model: str
    path: str  # what the base URL needs after the server's address
    stream: str  # a recorded stream with the provider's own usage report (corpus, or `recorded/` in the repo)
    counts: tuple[int, int, int, int]  # its input, output (with reasoning), reasoning, cached input

    def reply(self) -> Reply:
        if self.stream.startswith("recorded/"):  # tests/fixtures/openai_responses
            return Reply(body=rx.recorded(self.stream.removeprefix("recorded/")))
        return Reply.from_corpus(CORPUS, self.stream)

    def env(self, server: ProviderReplayServer) -> dict[str, str]:
        return {"DEFAULT_TEXT_PROVIDER": self.provider, "DEFAULT_TEXT_MODEL": self.model,
                "DEFAULT_TEXT_BASE_URL": f"{server.url}{self.path}", "DEFAULT_TEXT_API_KEYS": "sk-env-usage"}


# The counts are the ones each recorded stream reports (Gemini: candidates 469 + thoughts 787).
# OpenAI speaks the Responses API: its recorded summaries stream (Azure gpt-5, SOURCES.md).
FAMILIES = {
    "openai": Family("openai", "gpt-5", "/v1", "recorded/reasoning_multi_summary_encrypted", (100, 500, 300, 0)),
    "deepseek": Family("deepseek", "deepseek-reasoner", "", "deepseek/reasoner_reasoning_content", (6, 212, 198, 0)),
    "anthropic": Family("anthropic", "claude-sonnet-4", "", "anthropic/thinking_signature", (43, 282, 0, 0)),
    "google": Family("google", "gemini-2.5-pro", "", "gemini/thinking_thought_parts", (34, 1256, 787, 0)),
}


async def ask(fake: FakeDiscord, text: str, author: dict[str, Any] | None = None):
    return await fake.send_user_message(f"<@{fake.bot_user['id']}> {text}", mention_bot=True, author=author)


async def usage_rows(bot) -> list[UsageDay]:
    async with bot.sessions() as session:
        return list((await session.scalars(select(UsageDay).order_by(UsageDay.id))).all())


async def rows_when(bot, count: int) -> list[UsageDay]:
    """The usage rows once `count` answers were recorded (recording follows delivery)."""
    async def recorded() -> None:
        assert sum(r.messages for r in await usage_rows(bot)) == count

    await eventually(recorded, timeout=30.0)
    return await usage_rows(bot)


def counts(row: UsageDay) -> tuple[int, int, int, int]:
    return row.input_tokens, row.output_tokens, row.reasoning_tokens, row.cached_input_tokens


def bot_lines(fake: FakeDiscord) -> list[str]:
    """The bot's messages in the channel, without the replies to slash commands."""
    return [m.content for m in fake.bot_messages(fake.channel_id) if not m.deleted and m.webhook_token is None]


def delivered(fake: FakeDiscord, text: str) -> bool:
    return text in bot_lines(fake)


@requires_corpus
@pytest.mark.parametrize("name", sorted(FAMILIES))
async def test_each_familys_own_usage_is_recorded_and_shown_by_usage(
        name: str, fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server, family = fake_discord, provider_server, FAMILIES[name]
    server.reply(family.reply())
    bot = turn_bot(**family.env(server))
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.usage.set_price(session, int(fake.guild_id), family.model, 2.0, 10.0)
        await ask(fake, "how do I cross the street?")
        [row] = await rows_when(bot, 1)
        report = await command(run, fake, "usage")
        mine = await command(run, fake, "personal", sub("usage"), permissions="0")
    assert (row.guild_id, row.user_id, row.provider, row.model) == (
        int(fake.guild_id), int(fake.member_user["id"]), family.provider, family.model)
    assert (row.credential_source, row.estimated, row.messages, row.day) == (
        "environment", False, 1, datetime.now(UTC).date())
    assert counts(row) == family.counts
    inp, out, reasoning, cached = family.counts
    tokens = (f"{inp:,} in ({cached:,} cached), {out:,} out ({reasoning:,} reasoning), 1 answer(s)")
    cost = f"cost ≈ {inp * 2.0 / 1e6 + out * 10.0 / 1e6:,.4f}"
    lines = report.content.splitlines()
    assert report.ephemeral and lines[0] == "**Token usage on this server**"
    assert lines[1] == f"Today (UTC): {tokens} · {cost}"
    assert f"{family.provider} / `{family.model}`: {tokens} · {cost}" in lines
    assert f"1. <@{fake.member_user['id']}>: {tokens}" in lines
    assert mine.content.splitlines()[:2] == ["**Your token usage (all servers)**", f"Today (UTC): {tokens}"]


def tool_call_with_usage(prompt: int, completion: int) -> Reply:
    """An OpenAI-format response that calls `roll_dice`, then reports its usage."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-u", "object": "chat.completion.chunk", "created": 1700000000, "model": "model-a",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    call = {"index": 0, "id": "call_u", "type": "function", "function": {"name": "roll_dice", "arguments": "{}"}}
    usage = {"id": "chatcmpl-u", "object": "chat.completion.chunk", "created": 1700000000, "model": "model-a",
             "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                      "total_tokens": prompt + completion}}
    return Reply.sse([chunk({"role": "assistant", "content": ""}), chunk({"tool_calls": [call]}),
                      chunk({}, "tool_calls"), usage])


async def test_a_tool_loop_records_the_sum_of_its_responses_and_a_silent_provider_is_estimated(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    text = "You rolled a four."
    silent = "No usage is reported for this answer at all."
    no_usage = Reply.sse([{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "model-a",
                           "choices": [{"index": 0, "delta": {"content": silent}, "finish_reason": "stop"}]}])
    server.enqueue(tool_call_with_usage(100, 20), openai_stream(text), no_usage)  # the second: 12 in, 345 out
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await ask(fake, "roll a die")
        await run.wait_for(lambda: delivered(fake, text))
        await rows_when(bot, 1)
        await ask(fake, "say something")
        await run.wait_for(lambda: any(silent in line for line in bot_lines(fake)))
        measured, guessed = await rows_when(bot, 2)
    assert (measured.credential_source, measured.estimated, counts(measured)) == ("server", False, (112, 365, 0, 0))
    prompt = len(server.requests[-1].json["messages"][-1]["content"])
    assert guessed.estimated and guessed.output_tokens == math.ceil(len(silent) / 4)
    assert guessed.input_tokens >= math.ceil(prompt / 4) > 0


def limit_line(key: str, limit: int, resets: list[datetime]) -> set[str]:
    """The refusal as the member reads it, for each reset time it may fairly name."""
    return {t(key, "en", limit=f"{limit:,}", resets=f"<t:{int(r.timestamp())}:t> (<t:{int(r.timestamp())}:R>)")
            for r in resets}


def next_hours() -> list[datetime]:
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return [hour + timedelta(hours=1), hour + timedelta(hours=2)]


def next_days() -> list[datetime]:
    day = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return [day + timedelta(days=1), day + timedelta(days=2)]


async def answered(run, fake: FakeDiscord, count: int) -> None:
    await run.wait_for(lambda: len([m for m in bot_lines(fake) if m]) >= count)
    await asyncio.sleep(0.2)


async def test_messages_per_hour_refuses_before_any_provider_request(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("First answer."))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        done = await command(run, fake, "limits", sub("set", opt("messages_per_hour", 1)))
        await ask(fake, "one")
        await run.wait_for(lambda: delivered(fake, "First answer."))
        await ask(fake, "two")
        await answered(run, fake, 2)
    assert done.content.splitlines()[:3] == [
        "Limits saved.", "**Limits on this server** (answers paid by a member's own key are not limited)",
        "Messages per member per hour: 1"]
    assert len(server.requests) == 1
    assert bot_lines(fake)[-1] in limit_line("chat.limit_messages", 1, next_hours())


async def test_daily_token_limits_for_a_member_and_for_the_whole_server(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(openai_stream("Counted answer."))  # reports 12 + 345 tokens
    bob = member(fake, "bob")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await command(run, fake, "limits", sub("set", opt("tokens_per_day", 300)))
        await ask(fake, "first")
        await rows_when(bot, 1)
        await ask(fake, "second")
        await answered(run, fake, 2)
        member_refusal = bot_lines(fake)[-1]
        await command(run, fake, "limits", sub("set", opt("tokens_per_day", 0), opt("server_tokens_per_day", 350)))
        await ask(fake, "bob asks", author=bob)
        await answered(run, fake, 3)
        shown = await command(run, fake, "limits", sub("show"))
    assert len(server.requests) == 1
    assert member_refusal in limit_line("chat.limit_member_tokens", 300, next_days())
    assert bot_lines(fake)[-1] in limit_line("chat.limit_server_tokens", 350, next_days())
    assert shown.content.splitlines()[1:] == [
        "Messages per member per hour: no limit", "Tokens per member per day (UTC): no limit",
        "Tokens per day for the whole server (UTC): 350"]


@requires_corpus
async def test_a_members_own_key_is_counted_but_never_limited(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(Reply.from_corpus(CORPUS, "anthropic/text_short"))
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await configure_personal(bot, fake, "sk-ant-own-1234", server_fallback=False)
        await command(run, fake, "limits", sub("set", opt("messages_per_hour", 1), opt("tokens_per_day", 1)))
        for answers, question in enumerate(("one", "two", "three"), start=1):
            await ask(fake, question)  # one at a time: a newer question would stop the one streaming
            rows = await rows_when(bot, answers)
    assert [r.api_key for r in server.requests] == ["sk-ant-own-1234"] * 3
    assert [(r.credential_source, r.provider, r.messages) for r in rows] == [("personal", "anthropic", 3)]


PARAMS = (opt("temperature", 0.3), opt("max_output_tokens", 2048), opt("reasoning", "high"))


@requires_corpus
@pytest.mark.parametrize("name", ["openai", "anthropic", "google"])
async def test_model_params_reach_each_familys_request_and_thoughts_reach_the_thought_log(
        name: str, fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server, family = fake_discord, provider_server, FAMILIES[name]
    server.reply(family.reply())
    bot = turn_bot(**family.env(server), MAX_OUTPUT_TOKENS="1000")
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_thought_log_channel(session, int(fake.guild_id), int(fake.thought_channel_id))
        done = await command(run, fake, "model", sub("params", *PARAMS))
        await ask(fake, "think first")
        await rows_when(bot, 1)
        await run.wait_for(lambda: bool(fake.bot_messages(fake.thought_channel_id)))
    unsent = [] if capabilities_of(family.provider, family.model).takes_temperature else [
        t("commands.reply.params_not_taken", "en", model=family.model, setting="temperature")]
    assert done.content.splitlines() == ["Generation settings saved.", "**Generation settings**",
                                         "Temperature: 0.3 · max output tokens: 2,048 · reasoning: high", *unsent]
    body = server.requests[0].json
    if name == "openai":
        assert (body["reasoning"], body["max_output_tokens"]) == ({"effort": "high", "summary": "auto"}, 2048)
        assert "temperature" not in body  # a reasoning model refuses it
    elif name == "anthropic":
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
        assert body["max_tokens"] > 16384 and "temperature" not in body  # thinking takes no temperature
    else:
        assert body["generationConfig"] == {"maxOutputTokens": 2048, "temperature": 0.3,
                                            "thinkingConfig": {"thinkingBudget": 24576, "includeThoughts": True}}
    [post] = fake.bot_messages(fake.thought_channel_id)
    [embed] = post.embeds
    assert embed["footer"]["text"] == f"Provider: {family.provider}" and embed.get("description")


async def test_reasoning_off_sends_no_reasoning_and_the_operators_cap_stays_the_default(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot) -> None:
    fake, server = fake_discord, provider_server
    server.reply(responses_stream("Plain."))
    bot = turn_bot(DEFAULT_TEXT_PROVIDER="openai", DEFAULT_TEXT_MODEL="o4-mini", MAX_OUTPUT_TOKENS="777",
                   DEFAULT_TEXT_BASE_URL=f"{server.url}/v1", DEFAULT_TEXT_API_KEYS="sk-env")
    async with running_bot(fake, bot) as run:
        await command(run, fake, "model", sub("params", opt("reasoning", "off")))
        await ask(fake, "plain please")
        await run.wait_for(lambda: delivered(fake, "Plain."))
    [request] = server.requests
    assert request.json["max_output_tokens"] == 777
    assert "effort" not in request.json.get("reasoning", {}) and "temperature" not in request.json


async def test_a_reached_limit_closes_only_the_servers_fallback_behind_a_members_own_key(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, monkeypatch) -> None:
    from bot.repo.usage import UsageAdd, UsageKey, add_usages
    from bot.usage.tokens import TokenCounts
    from tests.support.data_errors import anthropic_error

    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(anthropic_error(429, "rate_limit_error", "Number of requests exceeded"), key="sk-ant-own-5678")
    server.reply(openai_stream("the server's keys must not pay"), key="sk-pool-first")
    bot = turn_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)
        await configure_personal(bot, fake, "sk-ant-own-5678", server_fallback=True)
        guild, user = int(fake.guild_id), int(fake.member_user["id"])
        async with bot.sessions() as session, session.begin():
            today = datetime.now(UTC).date()
            spent = UsageKey(guild, user, "custom", "model-a", "server", today)
            await add_usages(session, [UsageAdd(spent, TokenCounts(90, 20))])
        await command(run, fake, "limits", sub("set", opt("tokens_per_day", 100)))
        await ask(fake, "mine, then yours?")
        await run.wait_for(lambda: any(m.embeds for m in fake.bot_messages(fake.channel_id)))
        await asyncio.sleep(0.2)
    assert [r.api_key for r in server.requests] == ["sk-ant-own-5678"]  # no fallback to the server's pool
