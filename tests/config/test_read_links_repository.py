"""The read-links switch on the database itself (SQLite, and PostgreSQL when
TEST_POSTGRES_URL is set): on until a manager turns it off, stored beside the server's
other declared settings without touching them, and seen by the configuration read here at
once and by another process after its poll."""

from __future__ import annotations

from bot.capabilities.reading.settings import READING
from bot.capabilities.web_search.settings import WEB_SEARCH
from bot.load.config_cache import ConfigCache
from bot.repo.capability_settings import read_values, set_values
from bot.settings import load_settings

GUILD, OTHER_GUILD = 7101, 7102


async def read_links(session, guild_id) -> bool:
    return (await read_values(session, READING, guild_id))["read_links"]


async def set_read_links(session, guild_id, enabled: bool) -> bool:
    return (await set_values(session, guild_id, READING, {"read_links": enabled}))["read_links"]


async def test_the_switch_is_on_until_turned_off(sessions):
    async with sessions() as session:
        assert await read_links(session, GUILD) is True
        assert await read_links(session, None) is True  # a DM: the operator's READ_LINKS alone
    async with sessions() as session, session.begin():
        assert await set_read_links(session, GUILD, False) is False
    async with sessions() as session:
        assert await read_links(session, GUILD) is False
        assert await read_links(session, OTHER_GUILD) is True
    async with sessions() as session, session.begin():
        assert await set_read_links(session, GUILD, True) is True
    async with sessions() as session:
        assert await read_links(session, GUILD) is True


async def test_the_switch_keeps_the_servers_other_settings(sessions):
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, WEB_SEARCH, {"web_search": True, "max_searches": 6})
    async with sessions() as session, session.begin():
        await set_read_links(session, GUILD, False)
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, WEB_SEARCH, {"web_search": False})
    async with sessions() as session:
        assert await read_values(session, WEB_SEARCH, GUILD) == {**WEB_SEARCH.defaults(), "max_searches": 6}
        assert await read_links(session, GUILD) is False


async def test_a_server_that_set_only_web_search_reads_links(sessions):
    async with sessions() as session, session.begin():
        await set_values(session, GUILD, WEB_SEARCH, {"web_search": True})
    async with sessions() as session:
        assert await read_links(session, GUILD) is True


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
