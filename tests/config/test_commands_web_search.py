"""`/settings web-search`, `/limits set searches_per_day`, `/model price per_1000_searches`,
`/status` and `/usage` through the fake Discord: gates, bounds refused in the member's
language with nothing stored, stored values, and what each shows."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import select

from bot import repo
from bot.db.models import CapabilitySettings, ModelPrice, UsageLimits
from bot.repo.usage import UsageAdd, UsageKey, add_usages
from bot.usage.tokens import TokenCounts
from tests.support.drive_commands import NO_PERMISSIONS, command, member, opt, sub
from tests.support.drive_discord_client import running_bot

REFUSED = "You need the Manage Server permission for this command."


async def rows(bot, model) -> list:
    async with bot.sessions() as session:
        return list((await session.scalars(select(model))).all())


async def test_web_search_is_set_by_managers_and_shown_by_status(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    erin = member(fake, "erin")
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "status")
        on = await command(run, fake, "settings", sub("web-search", opt("enabled", True)))
        more = await command(run, fake, "settings", sub("web-search", opt("enabled", True), opt("max_searches", 6)))
        shown = await command(run, fake, "status")
        member_view = await command(run, fake, "status", user=erin, permissions=NO_PERMISSIONS)
        ja = await command(run, fake, "status", locale="ja")
        off = await command(run, fake, "settings", sub("web-search", opt("enabled", False)), locale="ja")
        [row] = await rows(bot, CapabilitySettings)
        after = await command(run, fake, "status")
    assert "Web search: off." in before.content.splitlines()
    assert (on.content, on.ephemeral) == (
        "Web search is on: an answer may search the web up to 3 time(s) and cite its sources.", True)
    assert more.content == "Web search is on: an answer may search the web up to 6 time(s) and cite its sources."
    assert "Web search: on, up to 6 search(es) per answer." in shown.content.splitlines()
    assert "Web search" not in member_view.content  # the server's settings are for its managers
    assert "ウェブ検索: オン（回答あたり最大 6 回）。" in ja.content.splitlines()
    assert off.content == "ウェブ検索をオフにしました。回答はモデルの知識だけを使います。"
    assert row.settings == {"web_search": False, "max_searches": 6}  # the number is kept while off
    assert "Web search: off." in after.content.splitlines()


async def test_web_search_refused_without_manage_server_and_out_of_bounds(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        member_try = await command(run, fake, "settings", sub("web-search", opt("enabled", True)),
                                   user=member(fake, "erin"), permissions=NO_PERMISSIONS)
        too_many = await command(run, fake, "settings", sub("web-search", opt("enabled", True),
                                                            opt("max_searches", 11)))
        none = await command(run, fake, "settings", sub("web-search", opt("enabled", True), opt("max_searches", 0)),
                             locale="ja")
        stored = await rows(bot, CapabilitySettings)
    assert (member_try.content, member_try.ephemeral) == (REFUSED, True)
    assert (too_many.content, too_many.ephemeral) == (
        "Searches per answer must be between 1 and 10. Nothing was stored.", True)
    assert none.content == "回答あたりの検索回数は 1〜10 の範囲で指定してください。何も保存していません。"
    assert stored == []


async def test_status_in_a_dm_shows_the_operators_web_search(fake_discord, bot_factory):
    fake = fake_discord
    async with running_bot(fake, bot_factory()) as run:
        off = await command(run, fake, "status", dm=True)
    async with running_bot(fake, bot_factory(WEB_SEARCH=True)) as run:
        on = await command(run, fake, "status", dm=True)
    assert "Web search" not in off.content  # off, the default, goes unsaid
    assert "Web search: on (the bot operator's default)." in on.content.splitlines()


async def test_limits_set_searches_per_day_is_stored_shown_removed_and_bounded(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        member_try = await command(run, fake, "limits", sub("set", opt("searches_per_day", 5)),
                                   user=member(fake, "erin"), permissions=NO_PERMISSIONS)
        huge = await command(run, fake, "limits", sub("set", opt("searches_per_day", 1_000_001)))
        negative = await command(run, fake, "limits", sub("set", opt("searches_per_day", -1)), locale="ja")
        nothing = await rows(bot, UsageLimits)
        saved = await command(run, fake, "limits", sub("set", opt("searches_per_day", 25)))
        shown = await command(run, fake, "limits", sub("show"))
        ja = await command(run, fake, "limits", sub("show"), locale="ja")
        [row] = await rows(bot, UsageLimits)
        await command(run, fake, "limits", sub("set", opt("searches_per_day", 0)))
        removed = await command(run, fake, "limits", sub("show"))
    assert (member_try.content, member_try.ephemeral) == (REFUSED, True)
    assert huge.content == ("searches_per_day must be between 0 and 1,000,000 (0 removes the limit). "
                            "Nothing was stored.")
    assert negative.content == ("「1日あたりの検索」は 0〜1,000,000 の範囲で指定してください（0で解除）。"
                                "何も保存していません。")
    assert nothing == []
    assert saved.content.splitlines()[0] == "Limits saved."
    assert "Web searches per member per day (UTC): 25" in saved.content.splitlines()
    assert "Web searches per member per day (UTC): 25" in shown.content.splitlines()
    assert "メンバーごとの1日（UTC）あたりのウェブ検索：25" in ja.content.splitlines()
    assert row.searches_per_day == 25
    assert "Web searches" not in removed.content  # shown only while a search limit is set


async def test_usage_shows_searches_per_model_and_their_cost(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    guild, user = int(fake.guild_id), int(fake.member_user["id"])
    day = datetime.now(UTC).date()
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await add_usages(session, [
                UsageAdd(UsageKey(guild, user, "openai", "gpt-s", "server", day), TokenCounts(1000, 500, searches=3)),
                UsageAdd(UsageKey(guild, user, "openai", "gpt-plain", "server", day), TokenCounts(100, 50)),
            ])
        member_try = await command(run, fake, "model", sub("price", opt("model", "gpt-s"), opt("input_per_million", 1.0),
                                                           opt("output_per_million", 2.0),
                                                           opt("per_1000_searches", 10.0)),
                                   user=member(fake, "erin"), permissions=NO_PERMISSIONS)
        negative = await command(run, fake, "model", sub("price", opt("model", "gpt-s"),
                                                         opt("input_per_million", 1.0), opt("output_per_million", 2.0),
                                                         opt("per_1000_searches", -5.0)))
        nothing = await rows(bot, ModelPrice)
        price = await command(run, fake, "model", sub("price", opt("model", "gpt-s"), opt("input_per_million", 1.0),
                                                      opt("output_per_million", 2.0), opt("per_1000_searches", 10.0)))
        report = await command(run, fake, "usage")
        ja = await command(run, fake, "usage", locale="ja")
    assert (member_try.content, negative.content) == (REFUSED, "A price must be a number of 0 or more. "
                                                                "Nothing was stored.")
    assert nothing == []
    assert price.content.splitlines() == [
        "Price of `gpt-s` set: 1 per million input tokens, 2 per million output tokens.",
        "Web searches: 10 per thousand."]
    searches_cost = 3 * 10.0 / 1000
    cost = 1000 * 1.0 / 1e6 + 500 * 2.0 / 1e6 + searches_cost
    tokens = "1,000 in (0 cached), 500 out (0 reasoning), 1 answer(s)"
    line = f"openai / `gpt-s`: {tokens} · 3 web search(es) (≈ {searches_cost:,.4f}) · cost ≈ {cost:,.4f}"
    lines = report.content.splitlines()
    assert line in lines
    assert "openai / `gpt-plain`: 100 in (0 cached), 50 out (0 reasoning), 1 answer(s)" in lines
    today = [entry for entry in lines if entry.startswith("Today (UTC): ")][0]
    assert f"· 3 web search(es) (≈ {searches_cost:,.4f}) · cost ≈ {cost:,.4f}" in today
    assert any("ウェブ検索 3 回" in entry for entry in ja.content.splitlines())


async def test_search_on_a_model_that_cannot_search_says_so_and_what_would_make_it(fake_discord, bot_factory):
    """A custom model neither searches natively nor has the bot's search service to call:
    "on" alone promised searches that never happen (before, nothing said so)."""
    fake = fake_discord
    guild = int(fake.guild_id)
    cannot = "But no answer will search yet: this server's model (llama3.2) does not search the web by itself"
    async with running_bot(fake, bot_factory()) as run:
        async with run.bot.sessions() as session, session.begin():
            await repo.set_custom_endpoint(session, guild, "https://models.example/v1", "llama3.2")
        on = await command(run, fake, "settings", sub("web-search", opt("enabled", True)))
        shown = await command(run, fake, "status")
        async with run.bot.sessions() as session, session.begin():
            await repo.set_text_model(session, guild, "google", "gemini-2.5-flash")
        native = await command(run, fake, "settings", sub("web-search", opt("enabled", True)))
        native_shown = await command(run, fake, "status")
    async with running_bot(fake, bot_factory(SEARCH_BACKEND="searxng", SEARCH_URL="https://search.example")) as run:
        async with run.bot.sessions() as session, session.begin():
            await repo.set_custom_endpoint(session, guild, "https://models.example/v1", "llama3.2")
        served = await command(run, fake, "settings", sub("web-search", opt("enabled", True)))
    first, second = on.content.splitlines()
    assert first.startswith("Web search is on") and second.startswith(cannot)
    assert "</model set:" in second and "SEARCH_BACKEND" in second  # its id: the first run's sync
    assert ("Web search: on, but llama3.2 does not search by itself and the bot has no search service "
            "(SEARCH_BACKEND): no answer searches.") in shown.content.splitlines()
    assert len(native.content.splitlines()) == 1 and "does not search" not in native_shown.content
    assert len(served.content.splitlines()) == 1  # the bot's search service searches for it


async def test_web_search_that_nothing_can_serve_is_one_warning_at_start_and_said_in_a_dm(
        fake_discord, bot_factory, caplog):
    fake = fake_discord
    caplog.set_level(logging.WARNING)
    local = {"WEB_SEARCH": True, "DEFAULT_TEXT_PROVIDER": "custom", "DEFAULT_TEXT_MODEL": "llama3.2",
             "DEFAULT_TEXT_BASE_URL": "http://127.0.0.1:9/v1"}
    async with running_bot(fake, bot_factory(**local)) as run:
        dm = await command(run, fake, "status", dm=True)
    warned = [r.getMessage() for r in caplog.records if r.getMessage().startswith("WEB_SEARCH=true")]
    caplog.clear()
    async with running_bot(fake, bot_factory(WEB_SEARCH=True, DEFAULT_TEXT_PROVIDER="google",
                                             DEFAULT_TEXT_MODEL="gemini-2.5-flash")):
        pass
    assert warned == ["WEB_SEARCH=true, but custom/llama3.2 does not search the web by itself and SEARCH_BACKEND "
                      "is not set: no answer will search; set SEARCH_BACKEND (searxng, brave or tavily) or a "
                      "DEFAULT_TEXT_MODEL that searches"]
    assert not [r for r in caplog.records if r.getMessage().startswith("WEB_SEARCH=true")]
    assert "Web search: on (the bot operator's default)." not in dm.content
    assert "llama3.2 does not search by itself" in dm.content
