"""The read-links switch on the database itself (SQLite, and PostgreSQL when
TEST_POSTGRES_URL is set): on until a manager turns it off, stored beside the server's
other switches without touching them, and seen by the configuration read here at once and
by another process after its poll."""

from __future__ import annotations

from bot.db.models import ServerCapabilities
from bot.load.config_cache import ConfigCache
from bot.repo.read_links import get_read_links, set_read_links
from bot.repo.web_search import set_web_search
from bot.settings import load_settings

GUILD, OTHER_GUILD = 7101, 7102


async def test_the_switch_is_on_until_turned_off(sessions):
    async with sessions() as session:
        assert await get_read_links(session, GUILD) is True
        assert await get_read_links(session, None) is True  # a DM: the operator's READ_LINKS alone
    async with sessions() as session, session.begin():
        assert await set_read_links(session, GUILD, False) is False
    async with sessions() as session:
        assert await get_read_links(session, GUILD) is False
        assert await get_read_links(session, OTHER_GUILD) is True
    async with sessions() as session, session.begin():
        assert await set_read_links(session, GUILD, True) is True
    async with sessions() as session:
        assert await get_read_links(session, GUILD) is True


async def test_the_switch_keeps_the_servers_other_switches(sessions):
    async with sessions() as session, session.begin():
        await set_web_search(session, GUILD, True, 6)
    async with sessions() as session, session.begin():
        await set_read_links(session, GUILD, False)
    async with sessions() as session, session.begin():
        await set_web_search(session, GUILD, False)
    async with sessions() as session:
        row = await session.get(ServerCapabilities, GUILD)
    assert (row.read_links_enabled, row.web_search_enabled, row.max_searches,
            row.verbatim_tool_calling_enabled) == (False, False, 6, False)


async def test_a_row_written_before_the_switch_existed_reads_on(sessions):
    """Servers with capability rows from before this migration keep reading links."""
    async with sessions() as session, session.begin():
        await set_web_search(session, GUILD, True)
    async with sessions() as session:
        assert await get_read_links(session, GUILD) is True


async def test_the_configuration_read_sees_the_switch_here_at_once_and_there_after_its_poll(engine_factory):
    settings = load_settings(_env_file=None)
    here, there = ConfigCache(engine_factory(), settings), ConfigCache(engine_factory(), settings)
    for cache in (here, there):
        await cache.poll()
    assert (await there.server(GUILD)).read_links is True
    assert (await here.server(None)).read_links is True
    async with here.sessions() as session, session.begin():
        await set_read_links(session, GUILD, False)
    assert (await here.server(GUILD)).read_links is False
    assert (await there.server(GUILD)).read_links is True  # its copy, until it polls
    assert await there.poll() == 1
    assert (await there.server(GUILD)).read_links is False
    assert (await there.server(OTHER_GUILD)).read_links is True
