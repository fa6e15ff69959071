"""`/tools` through the fake Discord: managers list the operator's MCP servers and their
tools and turn a server or one tool off and on here (what the next question's request
offers follows at once); members without Manage Server are refused; `/tools reload` is
the bot owner's alone."""

from __future__ import annotations

from pathlib import Path

from providers.i18n import t
from tests.capabilities.mcp_tools.servers import servers_file
from tests.capabilities.mcp_tools.test_mcp_turn import answers, ask, start
from tests.support.data_openai import openai_stream
from tests.support.drive_commands import NO_PERMISSIONS, command, discord_text, opt, sub
from tests.support.drive_discord_client import running_bot
from tests.support.fake_discord_server import FakeDiscord
from tests.support.fake_provider_server import ProviderReplayServer


def offered(server: ProviderReplayServer, request: int) -> set[str]:
    return {tool["function"]["name"] for tool in server.requests[request].json.get("tools", [])
            if tool["function"]["name"].startswith("tiny__")}


async def test_managers_turn_servers_and_tools_off_and_on(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path) -> None:
    fake, server = fake_discord, provider_server
    path, _notes = servers_file(tmp_path)
    server.enqueue(openai_stream("one"), openai_stream("two"), openai_stream("three"))
    bot = turn_bot(MCP_SERVERS=str(path))
    async with running_bot(fake, bot) as run:
        await start(run, bot, fake, server)
        listed = await command(run, fake, "tools", sub("list"))
        assert listed.ephemeral
        assert listed.content.split("\n")[:3] == [
            "**tiny** (connected) — on here",
            "- lookup: read-only, runs at once — on",
            "- write\\_note: asks the asker first — on"]

        off = await command(run, fake, "tools", sub("disable", opt("server", "tiny")))
        assert off.content == discord_text(fake, "commands.tools.server_disabled", server="tiny")
        await ask(fake, "first")
        await run.wait_for(lambda: "one" in answers(fake), timeout=20)

        await command(run, fake, "tools", sub("enable", opt("server", "tiny")))
        tool_off = await command(run, fake, "tools", sub("disable", opt("server", "tiny"), opt("tool", "write_note")))
        assert tool_off.content == discord_text(fake, "commands.tools.tool_disabled", server="tiny", tool="write\\_note")
        await ask(fake, "second")
        await run.wait_for(lambda: "two" in answers(fake), timeout=20)

        await command(run, fake, "tools", sub("enable", opt("server", "tiny"), opt("tool", "write_note")))
        await ask(fake, "third")
        await run.wait_for(lambda: "three" in answers(fake), timeout=20)

        unknown = await command(run, fake, "tools", sub("disable", opt("server", "nosuch")))
        assert unknown.content == discord_text(fake, "commands.error.tools_no_server", server="nosuch")
        no_tool = await command(run, fake, "tools", sub("disable", opt("server", "tiny"), opt("tool", "rm_rf")))
        assert no_tool.content == discord_text(fake, "commands.error.tools_no_tool", server="tiny", tool="rm\\_rf")
        member = await command(run, fake, "tools", sub("disable", opt("server", "tiny")), permissions=NO_PERMISSIONS)
        assert member.content == t("commands.error.manage_server_required", "en")
    assert offered(server, 0) == set()
    assert offered(server, 1) == {"tiny__lookup", "tiny__environment_names", "tiny__crash", "tiny__hang"}
    assert offered(server, 2) == {"tiny__lookup", "tiny__environment_names", "tiny__write_note", "tiny__crash",
                                  "tiny__hang"}


async def test_reload_is_the_owners_and_a_broken_file_changes_nothing(
        fake_discord: FakeDiscord, provider_server: ProviderReplayServer, turn_bot, tmp_path: Path) -> None:
    fake, server = fake_discord, provider_server
    path, _notes = servers_file(tmp_path)
    bot = turn_bot(MCP_SERVERS=str(path))
    async with running_bot(fake, bot) as run:
        await start(run, bot, fake, server)
        hub = bot.get_cog("ToolsCog").hub
        refused = await command(run, fake, "tools", sub("reload"))
        assert refused.content == discord_text(fake, "commands.error.tools_owner_only")

        path.write_text('{"mcpServers": {"tiny": {"url": "ftp://nowhere"}}}', encoding="utf-8")
        broken = await command(run, fake, "tools", sub("reload"), user=fake.owner)
        assert broken.content.startswith("The MCP servers file was not reloaded")
        assert f"{path}: server tiny: an HTTP server needs" in broken.content
        assert hub.links["tiny"].up  # still the servers it had

        servers_file(tmp_path)
        reloaded = await command(run, fake, "tools", sub("reload"), user=fake.owner)
        assert reloaded.content == discord_text(fake, "commands.tools.reloaded", count=1)
        await run.wait_for(lambda: hub.links["tiny"].up, timeout=30)
