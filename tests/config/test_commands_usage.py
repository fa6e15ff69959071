"""`/limits`, `/usage`, `/model price|params` and `/personal usage` through the fake Discord:
gates, refusals that store nothing, and what `/status` shows managers."""

from __future__ import annotations

from sqlalchemy import select

from bot.db.models import GenerationParams, ModelPrice, UsageLimits
from tests.support.drive_commands import NO_PERMISSIONS, command, group, member, opt, sub
from tests.support.drive_discord_client import running_bot

REFUSED = "You need the Manage Server permission for this command."
GUILD_ONLY = "This command works only inside a server."


async def stored(bot) -> tuple[list, list, list]:
    async with bot.sessions() as session:
        return tuple([list((await session.scalars(select(model))).all())
                      for model in (UsageLimits, GenerationParams, ModelPrice)])  # type: ignore[return-value]


async def test_usage_is_for_managers_only_and_personal_usage_for_anyone(fake_discord, bot_factory):
    fake = fake_discord
    erin = member(fake, "erin")
    async with running_bot(fake, bot_factory()) as run:
        member_view = await command(run, fake, "usage", user=erin, permissions=NO_PERMISSIONS)
        in_dm = await command(run, fake, "usage", dm=True)
        ja = await command(run, fake, "usage", user=erin, permissions=NO_PERMISSIONS, locale="ja")
        manager_view = await command(run, fake, "usage")
        own = await command(run, fake, "personal", sub("usage"), user=erin, permissions=NO_PERMISSIONS)
        own_dm = await command(run, fake, "personal", sub("usage"), user=erin, dm=True)
    assert (member_view.content, member_view.ephemeral) == (REFUSED, True)
    assert in_dm.content == GUILD_ONLY
    assert ja.content == "このコマンドには「サーバー管理」権限が必要です。"
    assert manager_view.content.splitlines() == ["**Token usage on this server**", "No usage recorded yet."]
    assert own.content.splitlines() == ["**Your token usage (all servers)**", "No usage recorded yet."]
    assert own_dm.ephemeral and own_dm.content == own.content


async def test_new_manager_commands_refuse_members_and_store_nothing(fake_discord, bot_factory):
    fake = fake_discord
    erin = member(fake, "erin")
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        replies = [
            await command(run, fake, "limits", sub("set", opt("messages_per_hour", 5)), user=erin,
                          permissions=NO_PERMISSIONS),
            await command(run, fake, "limits", sub("show"), user=erin, permissions=NO_PERMISSIONS),
            await command(run, fake, "model", sub("params", opt("temperature", 1.0)), user=erin,
                          permissions=NO_PERMISSIONS),
            await command(run, fake, "model", sub("price", opt("model", "m"), opt("input_per_million", 1.0),
                                                  opt("output_per_million", 2.0)), user=erin,
                          permissions=NO_PERMISSIONS),
        ]
        rows = await stored(bot)
    assert [(r.content, r.ephemeral) for r in replies] == [(REFUSED, True)] * 4
    assert rows == ([], [], [])


async def test_negative_limits_and_out_of_range_settings_are_refused_clearly(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        negative = await command(run, fake, "limits", sub("set", opt("messages_per_hour", 5),
                                                          opt("tokens_per_day", -100)))
        many = await command(run, fake, "limits", sub("set", opt("messages_per_hour", 5_000_000)), locale="ja")
        hot = await command(run, fake, "model", sub("params", opt("temperature", 2.5), opt("reasoning", "low")))
        cold = await command(run, fake, "model", sub("params", opt("temperature", -0.5)), locale="ja")
        huge = await command(run, fake, "model", sub("params", opt("max_output_tokens", 200_001)))
        odd = await command(run, fake, "model", sub("params", opt("reasoning", "maximum")))
        price = await command(run, fake, "model", sub("price", opt("model", "gpt-x"), opt("input_per_million", -1.0),
                                                      opt("output_per_million", 2.0)))
        rows = await stored(bot)
    assert negative.content == ("tokens_per_day must be between 0 and 1,000,000,000 (0 removes the limit). "
                                "Nothing was stored.")
    assert many.content == "「1時間あたりのメッセージ」は 0〜1,000,000 の範囲で指定してください（0で解除）。何も保存していません。"
    assert hot.content == "The temperature must be between 0 and 2. Nothing was stored."
    assert cold.content == "温度は0から2の間でなければなりません。何も保存していません。"
    assert huge.content == "The output-token cap must be between 1 and 200000. Nothing was stored."
    assert odd.content == "Reasoning must be off, low, medium or high. Nothing was stored."
    assert price.content == "A price must be a number of 0 or more. Nothing was stored."
    assert rows == ([], [], [])


async def test_settings_are_stored_and_shown_by_status_to_managers(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        await command(run, fake, "limits", sub("set", opt("messages_per_hour", 20), opt("server_tokens_per_day",
                                                                                        1_000_000)))
        shown = await command(run, fake, "model", sub("params"))
        await command(run, fake, "model", sub("params", opt("max_output_tokens", 4000), opt("reasoning", "medium")))
        price = await command(run, fake, "model", sub("price", opt("model", "gpt-x"), opt("input_per_million", 0.15),
                                                      opt("output_per_million", 0.6)))
        status = await command(run, fake, "status")
        member_status = await command(run, fake, "status", user=member(fake, "erin"), permissions=NO_PERMISSIONS)
        fallback = await command(run, fake, "model", group("fallback", sub("list")))
    assert shown.content.splitlines() == [
        "**Generation settings**", "Temperature: default · max output tokens: default · reasoning: default"]
    assert price.content == ("Price of `gpt-x` set: 0.15 per million input tokens, "
                             "0.6 per million output tokens.")
    lines = status.content.splitlines()
    for line in ("Messages per member per hour: 20", "Tokens per member per day (UTC): no limit",
                 "Tokens per day for the whole server (UTC): 1,000,000",
                 "Temperature: default · max output tokens: 4,000 · reasoning: medium"):
        assert line in lines
    assert "Messages per member per hour" not in member_status.content
    assert fallback.content == "No fallback models are configured."  # the model group still works
