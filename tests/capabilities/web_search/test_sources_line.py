"""`/settings sources-line`, a switch declared by web search alone: on by default, a
grounded answer ends with its sources line; turned off by a manager (refused to a
member), the same answer ends without it, web search itself untouched; /status says which.

Every Discord test ends with no 429."""

from __future__ import annotations

from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.repo.capability_settings import set_values
from bot.repo.keys import add_server_key
from bot.repo.servers import set_text_model
from tests.support import data_anthropic_search as anthropic_search
from tests.support.drive_commands import NO_PERMISSIONS, command, member, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import Reply

SOURCES = f"-# Sources: <{anthropic_search.SHANNON_WIKI}> · <{anthropic_search.SHANNON_BRIT}>"


def answers(fake: FakeDiscord) -> list[str]:
    return [m.content for m in fake.bot_messages(ephemeral=False) if m.content and not m.deleted
            and m.webhook_token is None and "1916" in m.content]


async def test_the_sources_line_is_on_until_a_manager_turns_it_off(
        fake_discord, provider_server, turn_bot, monkeypatch) -> None:
    fake, server = fake_discord, provider_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(Reply.named_sse(anthropic_search.SEARCH_EVENTS))
    bot = turn_bot()
    guild = int(fake.guild_id)
    async with running_bot(fake, bot) as run:
        async with bot.sessions() as session, session.begin():
            await set_text_model(session, guild, "anthropic", "claude-sonnet-4-5")
            await add_server_key(session, bot.vault, guild, "anthropic", "sk-ant-server-0001")
            await set_values(session, guild, WEB_SEARCH, {"web_search": True})
        shown_on = await command(run, fake, "status")
        await fake.send_user_message(f"<@{fake.bot_user['id']}> when was Shannon born?", mention_bot=True)
        await run.wait_for(lambda: any(SOURCES in line for line in answers(fake)), timeout=10)

        refused = await command(run, fake, "settings", sub("sources-line", opt("enabled", False)),
                                user=member(fake, "erin"), permissions=NO_PERMISSIONS)
        off = await command(run, fake, "settings", sub("sources-line", opt("enabled", False)))
        off_ja = await command(run, fake, "settings", sub("sources-line", opt("enabled", False)), locale="ja")
        shown_off = await command(run, fake, "status")
        await fake.send_user_message(f"<@{fake.bot_user['id']}> and once more?", mention_bot=True)
        await run.wait_for(lambda: len(answers(fake)) == 2, timeout=10)
    first, second = answers(fake)
    assert first.endswith(SOURCES)
    assert "Sources" not in second and second == first.removesuffix(SOURCES).rstrip()
    assert "Sources line under web-grounded answers: on." in shown_on.content.splitlines()
    assert refused.content == "You need the Manage Server permission for this command."
    assert off.content == "The sources line is off: answers grounded on the web end without their sources."
    assert off_ja.content == "出典の行をオフにしました。ウェブを参照した回答に出典を表示しません。"
    assert "Sources line under web-grounded answers: off." in shown_off.content.splitlines()
    assert "Web search: on, up to 3 search(es) per answer." in shown_off.content.splitlines()  # kept
    assert fake.rate_limited == []
