"""`/model check` and `/personal check` through the real discord.py client against the fake
Discord, the official SDKs against the replay server (which answers each check by what
its request asks: the checks run at once), a real SQLite file."""

from __future__ import annotations

import logging

from sqlalchemy import select

from bot import repo
from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.check.cooldown import Cooldown
from bot.db.models import ServerApiKey, UsageDay
from bot.edge.limits import MESSAGE_LIMIT
from bot.repo.capability_settings import set_values
from providers.i18n import t
from tests.support.data_check import IMAGE_REFUSED, AnthropicChecks, GeminiChecks, chat_reply
from tests.support.data_errors import anthropic_error
from tests.support.drive_commands import command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.drive_waiting import eventually
from tests.support.env_bot_config import configure_personal, configure_server
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer, Reply
from tests.support.fake_search_service import FakeSearchService

SERVER_KEY = "sk-ant-server-check-7f3a"
OWN_KEY = "sk-ant-own-check-2b9c"
CLAUDE = "claude-sonnet-4-5"
ROWS = ["Streamed text", "Tool call round trip", "Reasoning shown", "Web search", "Image", "PDF"]


async def claude_server(bot, fake: FakeDiscord, *, web_search: bool = True) -> None:
    """The server's route as `/model set anthropic` and `/keys add` store it."""
    guild = int(fake.guild_id)
    async with bot.sessions() as session, session.begin():
        await repo.set_text_model(session, guild, "anthropic", CLAUDE)
        await repo.add_server_key(session, bot.vault, guild, "anthropic", SERVER_KEY)
        if web_search:
            await set_values(session, guild, WEB_SEARCH, {"web_search": True})


def rows_of(content: str) -> dict[str, str]:
    """Each check's row by its name: the mark, and what follows the name."""
    found = {}
    for line in content.splitlines():
        for name in ROWS:
            if line[2:].startswith(name + " "):
                found[name] = line
    return found


async def usage_rows(bot) -> list[UsageDay]:
    async with bot.sessions() as session:
        return list((await session.scalars(select(UsageDay))).all())


async def test_a_healthy_claude_route_passes_every_check_and_is_counted_like_an_answer(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch, caplog) -> None:
    caplog.set_level(logging.INFO)
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    checks = server.chooser = AnthropicChecks()
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await claude_server(bot, fake)
        done = await command(run, fake, "model", sub("check"))

        async def counted() -> None:
            assert [row.messages for row in await usage_rows(bot)] == [1]

        await eventually(counted)
    assert done.ephemeral and done.type == 5  # deferred: the checks take longer than Discord waits
    lines = done.content.splitlines()
    assert lines[0] == f"**Check of this server's route: anthropic / `{CLAUDE}` · key: …7f3a**"
    rows = rows_of(done.content)
    assert list(rows) == ROWS and all(row.startswith("✓ ") for row in rows.values()), done.content
    assert "How to fix" not in done.content and SERVER_KEY not in done.content
    # One request per check, all at once, and the tool round's second request.
    assert sorted(checks.asked) == sorted(["text", "tools", "tools", "reasoning", "web_search", "image", "document"])
    assert {r.api_key for r in server.requests} == {SERVER_KEY}
    bodies: dict[str, list[dict]] = {}
    for name, request in zip(checks.asked, server.requests, strict=True):  # the chooser sees them in order
        bodies.setdefault(name, []).append(request.json)
    first_tools, answer = sorted(bodies["tools"], key=lambda body: len(body["messages"]))
    assert [tool["name"] for tool in first_tools["tools"]] == ["check_word"]
    assert answer["tools"] == first_tools["tools"]  # Claude needs the tools to read tool history
    assert [m["role"] for m in answer["messages"]] == ["user", "assistant", "user"]
    assert answer["messages"][2]["content"][0]["type"] == "tool_result"
    assert answer["messages"][2]["content"][0]["tool_use_id"] == "toolu_check"
    [thinking] = bodies["reasoning"]
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 2048}  # reasoning_effort "low"
    [search] = bodies["web_search"]
    assert [tool["type"] for tool in search["tools"]] == ["web_search_20250305"]
    assert all(body["max_tokens"] == 1024 for body in bodies["text"] + bodies["image"] + bodies["document"])
    [row] = await usage_rows(bot)
    assert (row.credential_source, row.provider, row.model, row.user_id) == (
        "server", "anthropic", CLAUDE, int(fake.member_user["id"]))
    assert row.searches == 1 and row.input_tokens > 6000  # the fixture search's own counts are in the sum
    assert "route check of anthropic/claude-sonnet-4-5 (server key …7f3a)" in caplog.text
    assert SERVER_KEY not in caplog.text


async def test_a_refused_image_is_a_cross_with_its_kind_and_the_tips_of_the_servers_key(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.chooser = AnthropicChecks({"image": Reply.error(400, IMAGE_REFUSED)})
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await claude_server(bot, fake, web_search=False)
        done = await command(run, fake, "model", sub("check"))
    rows = rows_of(done.content)
    assert rows["Image"].startswith("✗ Image · ")
    assert rows["Image"].endswith("— request_refused: Anthropic rejected the request. Could not process image")
    assert rows["Web search"] == "– Web search — " + discord_text(fake, "commands.check.note.search_off", "en")
    assert all(rows[name].startswith("✓ ") for name in ROWS if name not in ("Image", "Web search"))
    fixes = done.content.split("**How to fix**\n", 1)[1].splitlines()
    assert fixes == ["• " + discord_text(fake, "genai.tips.verify_api_key", "en"), "• " + discord_text(fake, "genai.tips.switch_model_provider", "en")]


async def test_a_members_own_route_gets_the_personal_tips_and_counts_as_personal(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.chooser = AnthropicChecks({"document": anthropic_error(401, "authentication_error", "invalid x-api-key")})
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server)  # the server's own route is not what is checked
        await configure_personal(bot, fake, OWN_KEY, model=CLAUDE, server_fallback=False)
        done = await command(run, fake, "personal", sub("check"), permissions="0", locale="ja")

        async def counted() -> None:
            assert [(r.credential_source, r.messages) for r in await usage_rows(bot)] == [("personal", 1)]

        await eventually(counted)
    lines = done.content.splitlines()
    assert lines[0] == f"**あなた自身の経路の確認: anthropic / `{CLAUDE}` · キー: …2b9c**"
    assert {r.api_key for r in server.requests} == {OWN_KEY}
    [pdf] = [line for line in lines if line.startswith("✗ PDF")]
    assert "invalid_key" in pdf
    assert "• " + discord_text(fake, "genai.tips.verify_api_key_personal", "ja") in lines  # their own key's advice
    assert "• " + discord_text(fake, "genai.tips.verify_api_key", "ja") not in lines
    assert OWN_KEY not in done.content


async def test_a_route_without_a_key_says_so_in_one_line_and_asks_nothing(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot) -> None:
    fake, server = fake_discord, provider_server
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        nothing = await command(run, fake, "model", sub("check"))
        async with bot.sessions() as session, session.begin():
            await repo.set_text_model(session, int(fake.guild_id), "anthropic", CLAUDE)
        keyless = await command(run, fake, "model", sub("check"))
        own = await command(run, fake, "personal", sub("check"), permissions="0")
        again = await command(run, fake, "model", sub("check"))  # no request made: no cool-down taken
    assert nothing.content == discord_text(fake, "commands.check.no_route", "en")
    assert keyless.content == discord_text(fake, "commands.check.server_keys_required", "en")
    assert own.content == discord_text(fake, "commands.check.personal_incomplete", "en")
    assert again.content == keyless.content
    assert server.requests == []


async def test_resting_keys_are_named_and_nothing_is_asked(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    from datetime import UTC, datetime, timedelta

    from bot.repo.keys import KeyRef, record_key_failure

    fake, server = fake_discord, provider_server
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await claude_server(bot, fake)
        async with bot.sessions() as session, session.begin():
            [ident] = (await session.scalars(select(ServerApiKey.id))).all()
            now = datetime.now(UTC)
            await record_key_failure(session, KeyRef("server", ident), "rate_limit", now, now + timedelta(hours=1))
        resting = await command(run, fake, "model", sub("check"))
    assert resting.content == discord_text(fake, "commands.check.keys_resting", "en", provider="anthropic")
    assert server.requests == []


async def test_a_second_check_within_a_minute_is_refused_with_when_to_try_again(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.chooser = AnthropicChecks()
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await claude_server(bot, fake)
        await configure_personal(bot, fake, OWN_KEY, model=CLAUDE)
        first = await command(run, fake, "model", sub("check"))
        asked = len(server.requests)
        second = await command(run, fake, "model", sub("check"))
        own = await command(run, fake, "personal", sub("check"))  # another scope: the member's own
        own_again = await command(run, fake, "personal", sub("check"))
    assert rows_of(first.content) and len(server.requests) == 2 * asked
    prefix, when = second.content.rsplit(" ", 1)
    assert prefix + " {when}." == t("commands.check.cooldown", "en", when="{when}")
    assert when.startswith("<t:") and when.endswith(":R>.")
    assert rows_of(own.content)
    assert own_again.content.startswith("You checked your route less than a minute ago: check again <t:")


async def test_the_servers_limits_apply_where_the_server_pays(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.chooser = AnthropicChecks()
    bot = check_bot()
    bot.check_cooldown = Cooldown(seconds=0)  # only the limit stands between two checks here
    async with running_bot(fake, bot) as run:
        await claude_server(bot, fake, web_search=False)
        await command(run, fake, "limits", sub("set", opt("messages_per_hour", 1)))
        first = await command(run, fake, "model", sub("check"))
        asked = len(server.requests)
        refused = await command(run, fake, "model", sub("check"))
    assert rows_of(first.content)
    assert len(server.requests) == asked  # the refused check asked nothing
    assert refused.content.startswith("You have reached this server's limit of 1 messages per hour.")


async def test_a_custom_endpoint_checks_what_it_takes_and_its_address_is_checked_as_for_answers(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot) -> None:
    fake, server = fake_discord, provider_server
    server.chooser = lambda path, body: chat_reply(body)
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=("sk-custom-check-51d0",))
        done = await command(run, fake, "model", sub("check"))
    rows = rows_of(done.content)
    assert [rows[name][0] for name in ROWS] == ["✓", "✓", "–", "–", "✓", "–"], done.content
    assert rows["PDF"].endswith(t("commands.check.note.pdf_as_text", "en"))
    assert rows["Reasoning shown"].endswith(t("commands.check.note.no_reasoning", "en"))
    tool_bodies = [r.json for r in server.requests if r.json.get("tools")]
    assert [m["role"] for m in tool_bodies[-1]["messages"]] == ["system", "user", "assistant", "tool"]
    asked = len(server.requests)

    private = check_bot(ALLOW_PRIVATE_ENDPOINTS="false")  # the replay server's 127.0.0.1 is now refused
    async with running_bot(fake, private) as run:
        refused = await command(run, fake, "model", sub("check"))
    refused_rows = rows_of(refused.content)
    assert all(refused_rows[name].startswith("✗ ") and "address_refused" in refused_rows[name]
               for name in ("Streamed text", "Tool call round trip", "Image")), refused.content
    assert len(server.requests) == asked  # nothing more reached the endpoint


async def test_the_reply_fits_discord_when_every_check_fails_differently_at_length(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    words = " because of a very long reason" * 100
    server.chooser = AnthropicChecks({
        "text": anthropic_error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit" + words),
        "tools": anthropic_error(401, "authentication_error", "invalid x-api-key" + words),
        "reasoning": anthropic_error(529, "overloaded_error", "Overloaded" + words),
        "web_search": anthropic_error(404, "not_found_error", f"model: {CLAUDE}" + words),
        "image": Reply.error(400, IMAGE_REFUSED),
        "document": anthropic_error(403, "permission_error", "Your API key does not have permission" + words),
    })
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await claude_server(bot, fake)
        done = await command(run, fake, "model", sub("check"), locale="ja")
    assert len(done.content) <= MESSAGE_LIMIT
    lines = done.content.splitlines()
    rows = [line for line in lines if line.startswith("✗ ")]
    assert len(rows) == 6, done.content
    kinds = ["rate_limit", "invalid_key", "overloaded", "model_error", "request_refused"]
    assert all(any(f"— {kind}: " in row for row in rows) for kind in kinds), done.content
    assert "**直し方**" in lines and lines[lines.index("**直し方**") + 1].startswith("• ")
    assert SERVER_KEY not in done.content


async def test_the_operators_default_answers_an_unconfigured_server_within_its_own_limits(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot) -> None:
    fake, server = fake_discord, provider_server
    checks = server.chooser = GeminiChecks()
    bot = check_bot(DEFAULT_TEXT_PROVIDER="google", DEFAULT_TEXT_MODEL="gemini-2.5-flash",
                    DEFAULT_TEXT_BASE_URL=server.url, DEFAULT_TEXT_API_KEYS="AIza-operator-check-99aa",
                    WEB_SEARCH="true", DEFAULT_MESSAGES_PER_HOUR="1")
    bot.check_cooldown = Cooldown(seconds=0)  # only the operator's limit stands between two checks here
    async with running_bot(fake, bot) as run:
        done = await command(run, fake, "model", sub("check"))
        asked = len(server.requests)
        refused = await command(run, fake, "model", sub("check"))

        async def counted() -> None:
            assert [(r.credential_source, r.provider, r.messages) for r in await usage_rows(bot)] == [
                ("environment", "google", 1)]

        await eventually(counted)
    rows = rows_of(done.content)
    assert list(rows) == ROWS and all(row.startswith("✓ ") for row in rows.values()), done.content
    assert sorted(checks.asked) == sorted(["text", "tools", "tools", "reasoning", "web_search", "image", "document"])
    [answer] = [r.json for r, name in zip(server.requests, checks.asked, strict=True)
                if name == "tools" and any("functionResponse" in p for c in r.json["contents"] for p in c["parts"])]
    [call] = [p for c in answer["contents"] for p in c["parts"] if "functionCall" in p]
    assert call["thoughtSignature"]  # the signature goes back with the call, as a turn sends it
    assert len(server.requests) == asked
    assert refused.content.startswith("You have reached this bot's limit of 1 messages per hour.")
    assert done.content.splitlines()[0] == ("**Check of this server's route: google / `gemini-2.5-flash` · "
                                            "key: the bot's default**")  # not even its tail, as /status
    assert "99aa" not in done.content + refused.content


async def test_a_route_that_does_not_search_itself_checks_the_bots_search_service(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot) -> None:
    fake, server = fake_discord, provider_server
    server.chooser = lambda path, body: chat_reply(body)
    async with FakeSearchService() as search:
        bot = check_bot(SEARCH_BACKEND="searxng", SEARCH_URL=search.url)
        bot.check_cooldown = Cooldown(seconds=0)
        async with running_bot(fake, bot) as run:
            await configure_server(bot, fake, server, keys=("sk-custom-check-51d0",))
            async with bot.sessions() as session, session.begin():
                await set_values(session, int(fake.guild_id), WEB_SEARCH, {"web_search": True})
            found = await command(run, fake, "model", sub("check"))
            search.fail(500)
            failed = await command(run, fake, "model", sub("check"))
        assert [seen.query.get("q") for seen in search.requests] == ["today's date", "today's date"]
    assert rows_of(found.content)["Web search"].startswith("✓ Web search · ")
    assert rows_of(failed.content)["Web search"].endswith(t("commands.check.note.service_failed", "en"))
    assert search.url not in failed.content


async def test_a_member_checks_their_global_key_in_a_dm(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.chooser = AnthropicChecks()
    bot = check_bot()
    user = int(fake.member_user["id"])
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await repo.set_personal_key(session, bot.vault, user, None, OWN_KEY)
            await repo.set_personal_model(session, user, None, "anthropic", CLAUDE)
        done = await command(run, fake, "personal", sub("check"), dm=True)

        async def counted() -> None:
            assert [(r.guild_id, r.credential_source) for r in await usage_rows(bot)] == [(None, "personal")]

        await eventually(counted)
    rows = rows_of(done.content)
    assert done.ephemeral and rows["Web search"].startswith("– ")  # a DM has no server that turned it on
    assert all(rows[name].startswith("✓ ") for name in ROWS if name != "Web search"), done.content
    assert {r.api_key for r in server.requests} == {OWN_KEY}


async def test_a_primary_without_a_key_is_named_and_the_model_a_turn_starts_with_is_checked(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, check_bot) -> None:
    fake, server = fake_discord, provider_server
    server.chooser = lambda path, body: chat_reply(body)
    bot = check_bot()
    async with running_bot(fake, bot) as run:
        await configure_server(bot, fake, server, keys=("sk-custom-check-51d0",))
        async with bot.sessions() as session, session.begin():
            await repo.add_fallback(session, int(fake.guild_id), "custom", "model-a")  # stays, behind the new primary
            await repo.set_text_model(session, int(fake.guild_id), "anthropic", CLAUDE)
        done = await command(run, fake, "model", sub("check"))
        async with bot.sessions() as session, session.begin():
            await repo.set_member_keys_required(session, int(fake.guild_id), True)
        members_pay = await command(run, fake, "model", sub("check"))
    lines = done.content.splitlines()
    assert lines[0] == "**Check of this server's route: custom / `model-a` · key: …51d0**"
    assert lines[1] == t("commands.check.not_primary", "en", models=f"anthropic/{CLAUDE}")
    assert {r.json["model"] for r in server.requests} == {"model-a"}
    assert members_pay.content == discord_text(fake, "commands.check.member_keys_required", "en")
