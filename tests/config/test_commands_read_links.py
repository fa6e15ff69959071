"""`/settings read-links` and `/status` through the fake Discord: refused for members
without Manage Server (nothing stored), the switch stored and seen by the configuration
read, each reply and status line in English and Japanese, and the operator's READ_LINKS
off shown as winning over the server's switch."""

from __future__ import annotations

from sqlalchemy import select

from bot.db.models import CapabilitySettings
from tests.support.drive_commands import NO_PERMISSIONS, command, member, opt, sub
from tests.support.drive_discord_client import running_bot

REFUSED = "You need the Manage Server permission for this command."
REFUSED_JA = "このコマンドには「サーバー管理」権限が必要です。"


async def rows(bot) -> list[CapabilitySettings]:
    async with bot.sessions() as session:
        return list((await session.scalars(select(CapabilitySettings))).all())


async def test_read_links_is_set_by_managers_and_shown_by_status(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    guild = int(fake.guild_id)
    erin = member(fake, "erin")
    async with running_bot(fake, bot) as run:
        before = await command(run, fake, "status")
        assert (await bot.config.server(guild)).read_links is True  # never set: on
        off = await command(run, fake, "settings", sub("read-links", opt("enabled", False)))
        [row] = await rows(bot)
        seen_off = (await bot.config.server(guild)).read_links
        shown = await command(run, fake, "status")
        member_view = await command(run, fake, "status", user=erin, permissions=NO_PERMISSIONS)
        ja_status = await command(run, fake, "status", locale="ja")
        on = await command(run, fake, "settings", sub("read-links", opt("enabled", True)), locale="ja")
        seen_on = (await bot.config.server(guild)).read_links
        after = await command(run, fake, "status")
    assert "Reading links: on." in before.content.splitlines()
    assert (off.content, off.ephemeral) == ("Reading links is off: links in questions are left unopened.", True)
    assert (row.capability, row.settings) == ("reading", {"read_links": False})  # web search's untouched
    assert seen_off is False and seen_on is True  # the write dropped the cached copy at once
    assert "Reading links: off." in shown.content.splitlines()
    assert "Reading links" not in member_view.content  # the server's settings are for its managers
    assert "リンクの読み取り: オフ。" in ja_status.content.splitlines()
    assert on.content == "リンクの読み取りをオンにしました。質問にあるリンク先のページを読んで回答します。"
    assert "Reading links: on." in after.content.splitlines()


async def test_read_links_refused_without_manage_server(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory()
    async with running_bot(fake, bot) as run:
        member_try = await command(run, fake, "settings", sub("read-links", opt("enabled", False)),
                                   user=member(fake, "erin"), permissions=NO_PERMISSIONS)
        ja_try = await command(run, fake, "settings", sub("read-links", opt("enabled", False)),
                               user=member(fake, "erin"), permissions=NO_PERMISSIONS, locale="ja")
        stored = await rows(bot)
    assert (member_try.content, member_try.ephemeral) == (REFUSED, True)
    assert (ja_try.content, ja_try.ephemeral) == (REFUSED_JA, True)
    assert stored == []


async def test_the_operators_read_links_off_wins_and_is_said(fake_discord, bot_factory):
    fake = fake_discord
    bot = bot_factory(READ_LINKS="false")
    async with running_bot(fake, bot) as run:
        status = await command(run, fake, "status")
        on = await command(run, fake, "settings", sub("read-links", opt("enabled", True)))
        off = await command(run, fake, "settings", sub("read-links", opt("enabled", False)), locale="ja")
        ja_status = await command(run, fake, "status", locale="ja")
    assert "Reading links: off for every server (the bot operator's setting)." in status.content.splitlines()
    assert on.content == ("Reading links is on for this server, but the bot operator has turned link reading "
                          "off for every server (READ_LINKS), so links stay unopened.")
    assert off.content == "リンクの読み取りをオフにしました。質問にあるリンクは開きません。"
    assert "リンクの読み取り: すべてのサーバーでオフ（ボット運営者の設定）。" in ja_status.content.splitlines()
