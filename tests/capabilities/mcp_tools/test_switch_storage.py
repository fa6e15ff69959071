"""The switches on SQLite and PostgreSQL: a switch set twice keeps the last word, loads
with the server's configuration, and a write in one process reaches another's cached
copy at its next poll (the "server" stamp)."""

from __future__ import annotations

from bot.capabilities.mcp_tools.hub import switched_on
from bot.capabilities.mcp_tools.storage import set_switch, switches_of
from bot.load.config_cache import ConfigCache
from bot.settings import load_settings

HERE, THERE = 4242, 4343


def cache_on(engine_factory) -> ConfigCache:
    return ConfigCache(engine_factory(), load_settings(_env_file=None))


async def test_switches_keep_the_last_word_and_reach_other_processes(engine_factory):
    here, there = cache_on(engine_factory), cache_on(engine_factory)
    await here.poll()
    assert (await here.server(HERE)).mcp_switches == {}
    async with there.sessions() as session, session.begin():
        await set_switch(session, HERE, "notes", "", False)
        await set_switch(session, HERE, "wiki", "edit_page", False)
        await set_switch(session, HERE, "notes", "", True)
        await set_switch(session, THERE, "notes", "", False)
    assert (await here.server(HERE)).mcp_switches == {}  # kept until the poll
    await here.poll()
    switches = (await here.server(HERE)).mcp_switches
    assert switches == {("notes", ""): True, ("wiki", "edit_page"): False}
    assert switched_on(switches, "notes", "write") and switched_on(switches, "wiki", "read_page")
    assert not switched_on(switches, "wiki", "edit_page")
    async with here.sessions() as session:
        assert await switches_of(session, THERE) == {("notes", ""): False}
    assert not switched_on({("notes", ""): False}, "notes", "anything")
